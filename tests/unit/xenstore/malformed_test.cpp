// Hostile clients on the raw socket: the server answers or disconnects, never
// crashes, and keeps serving everybody else.

#include <gtest/gtest.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <xen/io/xs_wire.h>

#include <poll.h>
#include <cerrno>
#include <cstring>

#include "sim_fixture.hpp"
#include "unetback/xs/sim/wire.hpp"

namespace unetback::xs::testing {
namespace {

class raw_conn {
 public:
  explicit raw_conn(const std::filesystem::path& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ADD_FAILURE() << "connect: " << std::strerror(errno);
    }
  }
  ~raw_conn() { ::close(fd_); }
  raw_conn(const raw_conn&) = delete;
  raw_conn& operator=(const raw_conn&) = delete;

  void send(const std::string& bytes) {
    (void)::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
  // One whole message, or "" on EOF/timeout.
  std::string receive() {
    std::string out;
    while (out.size() < sim::header_size || out.size() < sim::header_size + length(out)) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 2000) <= 0) {
        return {};
      }
      char buf[8192];
      const std::size_t want = out.size() < sim::header_size
                                   ? sim::header_size - out.size()
                                   : sim::header_size + length(out) - out.size();
      const ssize_t n = ::recv(fd_, buf, std::min(want, sizeof(buf)), 0);
      if (n <= 0) {
        return {};
      }
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }
  bool closed_by_peer() {
    pollfd p{fd_, POLLIN, 0};
    for (int i = 0; i < 200; ++i) {
      if (::poll(&p, 1, 20) > 0) {
        char buf[4096];
        const ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno == ECONNRESET)) {
          return true;
        }
      }
    }
    return false;
  }

 private:
  static std::uint32_t length(const std::string& msg) {
    std::uint32_t len = 0;
    std::memcpy(&len, msg.data() + 12, sizeof(len));
    return len;
  }
  int fd_ = -1;
};

std::uint32_t type_of(const std::string& msg) {
  std::uint32_t t = 0;
  std::memcpy(&t, msg.data(), sizeof(t));
  return t;
}

using XsMalformed = sim_xenstore_test;

TEST_F(XsMalformed, UnknownTypeGetsEinvalAndTheConnectionStaysUsable) {
  raw_conn c(server_->socket_path());
  c.send(sim::encode_message(77, 5, 0, std::string("x\0", 2)));
  const std::string reply = c.receive();
  ASSERT_EQ(type_of(reply), static_cast<std::uint32_t>(XS_ERROR));
  EXPECT_EQ(reply.substr(sim::header_size), std::string("EINVAL\0", 7));
  c.send(sim::encode_message(XS_READ, 6, 0, std::string("/local/domain/0/domid\0", 22)));
  const std::string ok = c.receive();
  ASSERT_EQ(type_of(ok), static_cast<std::uint32_t>(XS_READ));
  EXPECT_EQ(ok.substr(sim::header_size), "0");
}

TEST_F(XsMalformed, MissingNulTerminatorGetsEinval) {
  raw_conn c(server_->socket_path());
  c.send(sim::encode_message(XS_WRITE, 1, 0, "no-nul-anywhere"));
  EXPECT_EQ(type_of(c.receive()), static_cast<std::uint32_t>(XS_ERROR));
}

TEST_F(XsMalformed, OversizedPayloadDropsTheClientAndOthersAreServed) {
  raw_conn c(server_->socket_path());
  std::string hdr = sim::encode_message(XS_READ, 1, 0, "");
  const std::uint32_t len = 1U << 20;
  std::memcpy(hdr.data() + 12, &len, sizeof(len));
  c.send(hdr);
  EXPECT_TRUE(c.closed_by_peer());
  client xs = dom0();
  EXPECT_EQ(xs.read("/local/domain/0/domid"), "0");
}

// A watcher that never reads its events is dropped when its unread output
// passes the cap, which happens while a write fires its watches: the
// connection must not be freed under that loop (it was: heap-use-after-free,
// found by hostile StateFlips.WatchFloodFromSeveralConnectionsLeavesNoBacklog).
TEST_F(XsMalformed, AWatcherThatNeverReadsIsDroppedWhileItsEventsFire) {
  raw_conn watcher(server_->socket_path());
  const std::string token(2000, 't');  // big events: the 1 MiB cap in ~500 writes
  watcher.send(sim::encode_message(XS_WATCH, 1, 0,
                                   std::string("/flood\0", 7) + token + std::string("\0", 1)));
  watcher.send(sim::encode_message(XS_WATCH, 2, 0, std::string("/other\0t\0", 10)));
  client xs = dom0();
  for (int i = 0; i < 2000; ++i) {
    xs.write("/flood", std::to_string(i));
  }
  EXPECT_TRUE(watcher.closed_by_peer());
  EXPECT_EQ(xs.read("/flood"), "1999");
}

TEST_F(XsMalformed, RandomGarbageNeverKillsTheServer) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    raw_conn c(server_->socket_path());
    std::string junk(600, '\0');
    unsigned x = seed;
    for (char& ch : junk) {
      x = x * 1103515245U + 12345U;
      ch = static_cast<char>(x >> 16);
    }
    c.send(junk);
  }
  client xs = dom0();
  xs.write("/alive", "yes");
  EXPECT_EQ(xs.read("/alive"), "yes");
}

TEST_F(XsMalformed, ClientThatNeverReadsIsDropped) {
  client xs = dom0();
  xs.write("/big", std::string(4000, 'v'));
  raw_conn c(server_->socket_path());
  const std::string req = sim::encode_message(XS_READ, 1, 0, std::string("/big\0", 5));
  std::string burst;
  for (int i = 0; i < 100; ++i) {
    burst += req;
  }
  for (int i = 0; i < 40; ++i) {  // 4000 replies of 4 KiB, never read
    c.send(burst);
  }
  EXPECT_TRUE(c.closed_by_peer());
  EXPECT_EQ(xs.read("/big")->size(), 4000U);
}

TEST_F(XsMalformed, DroppedConnectionDiscardsItsTransaction) {
  {
    raw_conn c(server_->socket_path());
    c.send(sim::encode_message(XS_TRANSACTION_START, 1, 0, std::string("\0", 1)));
    const std::string started = c.receive();
    ASSERT_EQ(type_of(started), static_cast<std::uint32_t>(XS_TRANSACTION_START));
    const std::uint32_t tx =
        static_cast<std::uint32_t>(std::stoul(started.substr(sim::header_size)));
    c.send(sim::encode_message(XS_WRITE, 2, tx, std::string("/half\0done", 10)));
    ASSERT_EQ(type_of(c.receive()), static_cast<std::uint32_t>(XS_WRITE));
  }
  client xs = dom0();
  EXPECT_EQ(xs.read("/half"), std::nullopt);
}

TEST_F(XsMalformed, UnknownTransactionIdIsEnoent) {
  raw_conn c(server_->socket_path());
  c.send(sim::encode_message(XS_WRITE, 1, 4242, std::string("/x\0v", 4)));
  const std::string reply = c.receive();
  ASSERT_EQ(type_of(reply), static_cast<std::uint32_t>(XS_ERROR));
  EXPECT_EQ(reply.substr(sim::header_size), std::string("ENOENT\0", 7));
}

}  // namespace
}  // namespace unetback::xs::testing
