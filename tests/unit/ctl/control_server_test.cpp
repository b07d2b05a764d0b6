// control_server: one JSON object per line each way. Bad lines (malformed
// JSON, no "cmd", unknown command, a failing handler) get an error reply on
// the same connection, which stays usable; an oversized line ends only its
// own connection; the server keeps serving every other client.

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "unetback/ctl/control_protocol.hpp"
#include "unetback/ctl/control_server.hpp"
#include "unetback/test_support/temp_dir.hpp"

namespace unetback::ctl {
namespace {

using nlohmann::json;

// A blocking client connection with a receive timeout (a hung server fails
// the test instead of hanging it).
class client {
 public:
  explicit client(const std::string& path) : fd_(::socket(AF_UNIX, SOCK_STREAM, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
      throw std::runtime_error("connect " + path + ": " + std::strerror(errno));
    }
  }
  ~client() { ::close(fd_); }
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  /// Sends `bytes`; false if the peer is gone.
  bool send(const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) {
        return false;
      }
      done += static_cast<std::size_t>(n);
    }
    return true;
  }
  /// The next reply line, or nullopt if the server closed the connection
  /// (or sent nothing for 5 s).
  std::optional<std::string> line() {
    for (;;) {
      if (const auto nl = buffered_.find('\n'); nl != std::string::npos) {
        std::string l = buffered_.substr(0, nl);
        buffered_.erase(0, nl + 1);
        return l;
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 5000) != 1) {
        return std::nullopt;
      }
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) {
        return std::nullopt;
      }
      buffered_.append(buf, static_cast<std::size_t>(n));
    }
  }
  json ask(const std::string& request_line) {
    EXPECT_TRUE(send(request_line + "\n"));
    const auto l = line();
    EXPECT_TRUE(l.has_value()) << "no reply to " << request_line;
    return l ? json::parse(*l, nullptr, false) : json();
  }

 private:
  int fd_;
  std::string buffered_;
};

class ControlServer : public ::testing::Test {
 protected:
  void TearDown() override { stop(); }
  void start() {
    server_.emplace(io_, path_);
    server_->add_command("echo", [](const json& r) { return r.value("arg", json()); });
    server_->add_command(
        "fail", [](const json&) -> json { throw std::invalid_argument("no vif named 'vif9.0'"); });
    thread_ = std::thread([this] { io_.run(); });
  }
  void stop() {
    if (thread_.joinable()) {
      // The server lives on the io thread: destroy it there, then stop.
      std::promise<void> gone;
      boost::asio::post(io_, [this, &gone] {
        server_.reset();
        gone.set_value();
      });
      gone.get_future().wait();
      work_.reset();
      io_.stop();
      thread_.join();
    }
  }
  static void expect_error(const json& reply, const std::string& fragment) {
    EXPECT_EQ(reply.value("ok", true), false) << reply.dump();
    EXPECT_NE(reply.value("error", std::string()).find(fragment), std::string::npos)
        << reply.dump();
  }

  test_support::temp_dir tmp_{"unetback-ctl-"};
  std::string dir_ = tmp_.path().string();
  std::string path_ = dir_ + "/ctl.sock";
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io_.get_executor()};
  std::optional<control_server> server_;
  std::thread thread_;
};

TEST_F(ControlServer, RequestLineGetsOkReplyWithTheHandlersResult) {
  start();
  client c(path_);
  const json reply = c.ask(R"({"cmd": "echo", "arg": {"queues": [0, 1]}})");
  EXPECT_EQ(reply, (json{{"ok", true}, {"result", {{"queues", {0, 1}}}}}));
}

TEST_F(ControlServer, MalformedJsonGetsErrorReplyAndTheConnectionStaysUsable) {
  start();
  client c(path_);
  expect_error(c.ask(R"({"cmd": "echo",)"), "JSON object");
  expect_error(c.ask("\x01\xff garbage"), "JSON object");
  EXPECT_EQ(c.ask(R"({"cmd": "echo", "arg": 7})").value("result", 0), 7);
}

TEST_F(ControlServer, RequestWithoutAStringCmdIsRejected) {
  start();
  client c(path_);
  for (const char* bad : {"{}", "[1, 2]", R"("echo")", R"({"cmd": 5})", R"({"cmd": null})"}) {
    expect_error(c.ask(bad), "string \"cmd\"");
  }
}

TEST_F(ControlServer, UnknownCommandIsNamedInTheError) {
  start();
  client c(path_);
  expect_error(c.ask(R"({"cmd": "reboot"})"), "unknown command 'reboot'");
}

TEST_F(ControlServer, HandlerExceptionBecomesErrorReply) {
  start();
  client c(path_);
  expect_error(c.ask(R"({"cmd": "fail"})"), "no vif named 'vif9.0'");
  EXPECT_TRUE(c.ask(R"({"cmd": "echo"})").value("ok", false));
}

TEST_F(ControlServer, PipelinedRequestsAreAnsweredInOrder) {
  start();
  client c(path_);
  ASSERT_TRUE(c.send(R"({"cmd":"echo","arg":1})"
                     "\n"
                     R"({"cmd":"nope"})"
                     "\n"
                     R"({"cmd":"echo","arg":3})"
                     "\n"));
  EXPECT_EQ(json::parse(c.line().value_or("{}")).value("result", 0), 1);
  expect_error(json::parse(c.line().value_or("{}")), "unknown command 'nope'");
  EXPECT_EQ(json::parse(c.line().value_or("{}")).value("result", 0), 3);
}

TEST_F(ControlServer, OversizedLineGetsAnErrorAndEndsOnlyItsOwnConnection) {
  start();
  client other(path_);
  {
    client big(path_);
    // Longer than max_request_bytes with no newline: the server stops reading
    // this client (no unbounded buffering), answers why, and closes it.
    big.send(std::string(max_request_bytes + 4096, 'x'));
    const auto reply = big.line();
    ASSERT_TRUE(reply.has_value());
    const json j = json::parse(*reply);
    EXPECT_FALSE(j.value("ok", true));
    EXPECT_NE(j.value("error", std::string()).find("request longer than"), std::string::npos);
    EXPECT_FALSE(big.line().has_value());
  }
  EXPECT_TRUE(other.ask(R"({"cmd": "echo"})").value("ok", false));
  client fresh(path_);
  EXPECT_TRUE(fresh.ask(R"({"cmd": "echo"})").value("ok", false));
}

TEST_F(ControlServer, LineJustUnderTheLimitIsServed) {
  start();
  client c(path_);
  const std::string pad(max_request_bytes - 64, 'p');
  const json reply = c.ask(R"({"cmd": "echo", "arg": ")" + pad + "\"}");
  EXPECT_EQ(reply.value("result", std::string()).size(), pad.size());
}

TEST_F(ControlServer, ClientVanishingMidRequestDoesNotStopTheServer) {
  start();
  {
    client gone(path_);
    gone.send(R"({"cmd": "ec)");
  }
  client c(path_);
  EXPECT_TRUE(c.ask(R"({"cmd": "echo"})").value("ok", false));
}

TEST_F(ControlServer, SocketIsOwnerOnlyAndAStaleFileIsReplaced) {
  std::ofstream(path_) << "stale";
  start();
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600U);
  client c(path_);
  EXPECT_TRUE(c.ask(R"({"cmd": "echo"})").value("ok", false));
}

TEST_F(ControlServer, DestructionUnlinksTheSocket) {
  start();
  stop();
  EXPECT_FALSE(std::filesystem::exists(path_));
}

}  // namespace
}  // namespace unetback::ctl
