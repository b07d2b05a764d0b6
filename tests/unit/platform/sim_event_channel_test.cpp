// Simulated event channels: who may bind, coalescing, masking, rebinding.
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "sim_fixture.hpp"
#include "unetback/sim/endpoint.hpp"

namespace unetback::test {
namespace {

class SimEventChannel : public sim_fixture {
 protected:
  SimEventChannel()
      : guest_ev_(guest_->open_event_channel()), be_(platform_->open_event_channel()) {}

  evtchn_port bind(platform::event_channel& ev, evtchn_port remote) {
    std::error_code ec;
    const evtchn_port local = ev.bind_interdomain(guest_id, remote, ec);
    EXPECT_FALSE(ec) << ec.message();
    return local;
  }
  /// Drains every event `pending` yields within `ms`, unmasking none.
  template <class Pending>
  static std::vector<evtchn_port> drain(int fd, Pending pending, int ms) {
    std::vector<evtchn_port> got;
    while (readable(fd, ms)) {
      while (const auto p = pending()) {
        got.push_back(*p);
      }
    }
    return got;
  }

  std::unique_ptr<sim::guest_event_channel> guest_ev_;
  std::unique_ptr<platform::event_channel> be_;
};

TEST_F(SimEventChannel, BindingAPortNotOfferedToUsFails) {
  const evtchn_port other = guest_ev_->alloc_unbound(domid{3});
  std::error_code ec;
  be_->bind_interdomain(guest_id, other, ec);
  EXPECT_EQ(ec, std::errc::invalid_argument);
  be_->bind_interdomain(guest_id, evtchn_port{40}, ec);  // never allocated
  EXPECT_EQ(ec, std::errc::invalid_argument);
  be_->bind_interdomain(guest_id, evtchn_port{0}, ec);
  EXPECT_EQ(ec, std::errc::invalid_argument);
  be_->bind_interdomain(guest_id, evtchn_port{1000}, ec);  // beyond the table
  EXPECT_EQ(ec, std::errc::invalid_argument);
  be_->bind_interdomain(domid{9}, evtchn_port{1}, ec);  // no such domain
  EXPECT_EQ(ec, std::errc::no_such_process);
}

TEST_F(SimEventChannel, PortCanBeBoundOnlyOnce) {
  const evtchn_port port = guest_ev_->alloc_unbound(backend_id);
  bind(*be_, port);
  EXPECT_TRUE(guest_ev_->bound(port));
  std::error_code ec;
  be_->bind_interdomain(guest_id, port, ec);
  EXPECT_EQ(ec, std::errc::invalid_argument);
  auto other = platform_->open_event_channel();
  other->bind_interdomain(guest_id, port, ec);
  EXPECT_EQ(ec, std::errc::invalid_argument);
}

TEST_F(SimEventChannel, KicksCoalesceInBothDirections) {
  const evtchn_port gport = guest_ev_->alloc_unbound(backend_id);
  const evtchn_port local = bind(*be_, gport);
  for (int i = 0; i < 100; ++i) {
    guest_ev_->notify(gport);
  }
  const auto to_backend = drain(
      be_->fd(), [&] { return be_->pending(); }, 50);
  ASSERT_GE(to_backend.size(), 1U);
  EXPECT_LE(to_backend.size(), 2U);
  EXPECT_EQ(to_backend.front(), local);
  for (int i = 0; i < 100; ++i) {
    be_->notify(local);
  }
  const auto to_guest = drain(
      guest_ev_->fd(), [&] { return guest_ev_->pending(); }, 50);
  ASSERT_GE(to_guest.size(), 1U);
  EXPECT_LE(to_guest.size(), 2U);
  EXPECT_EQ(to_guest.front(), gport);
}

TEST_F(SimEventChannel, KickWhileMaskedIsDeliveredAfterUnmask) {
  const evtchn_port gport = guest_ev_->alloc_unbound(backend_id);
  const evtchn_port local = bind(*be_, gport);
  guest_ev_->notify(gport);
  ASSERT_TRUE(readable(be_->fd(), 1000));
  ASSERT_EQ(be_->pending(), local);  // now masked
  guest_ev_->notify(gport);
  EXPECT_FALSE(readable(be_->fd(), 20));
  EXPECT_EQ(be_->pending(), std::nullopt);
  be_->unmask(local);
  ASSERT_TRUE(readable(be_->fd(), 1000));
  EXPECT_EQ(be_->pending(), local);
  be_->unmask(local);
  EXPECT_FALSE(readable(be_->fd(), 20));  // nothing latched any more
}

TEST_F(SimEventChannel, EveryPendingPortIsReportedEvenWhenDoorbellsOverflow) {
  // More ports than a unix datagram queue holds (net.unix.max_dgram_qlen).
  std::vector<evtchn_port> gports;
  for (int i = 0; i < 24; ++i) {
    gports.push_back(guest_ev_->alloc_unbound(backend_id));
    bind(*be_, gports.back());
  }
  for (const auto p : gports) {
    guest_ev_->notify(p);
  }
  const auto got = drain(
      be_->fd(), [&] { return be_->pending(); }, 50);
  EXPECT_EQ(got.size(), gports.size());
}

TEST_F(SimEventChannel, UnboundPortCanBeBoundAgain) {
  const evtchn_port gport = guest_ev_->alloc_unbound(backend_id);
  const evtchn_port first = bind(*be_, gport);
  be_->unbind(first);
  EXPECT_FALSE(guest_ev_->bound(gport));
  auto again = platform_->open_event_channel();
  const evtchn_port second = bind(*again, gport);
  guest_ev_->notify(gport);
  ASSERT_TRUE(readable(again->fd(), 1000));
  EXPECT_EQ(again->pending(), second);
  EXPECT_FALSE(readable(be_->fd(), 20));
}

TEST_F(SimEventChannel, ClosingTheHandleUnbindsItsPorts) {
  const evtchn_port gport = guest_ev_->alloc_unbound(backend_id);
  bind(*be_, gport);
  be_.reset();
  EXPECT_FALSE(guest_ev_->bound(gport));
  auto again = platform_->open_event_channel();
  bind(*again, gport);
}

TEST_F(SimEventChannel, PortOfAKilledBinderCanBeBoundAgain) {
  const evtchn_port gport = guest_ev_->alloc_unbound(backend_id);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sim::sim_platform p(dir_, backend_id);
    auto ev = p.open_event_channel();
    std::error_code ec;
    ev->bind_interdomain(guest_id, gport, ec);
    ::_exit(ec ? 1 : 0);  // dies without unbinding
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(guest_ev_->bound(gport));
  const evtchn_port local = bind(*be_, gport);
  guest_ev_->notify(gport);
  ASSERT_TRUE(readable(be_->fd(), 1000));
  EXPECT_EQ(be_->pending(), local);
}

TEST_F(SimEventChannel, GuestKickToADeadBinderUnbindsThePort) {
  const evtchn_port gport = guest_ev_->alloc_unbound(backend_id);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sim::sim_platform p(dir_, backend_id);
    auto ev = p.open_event_channel();
    std::error_code ec;
    ev->bind_interdomain(guest_id, gport, ec);
    ::_exit(ec ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(guest_ev_->bound(gport));
  guest_ev_->notify(gport);
  EXPECT_FALSE(guest_ev_->bound(gport));
}

TEST_F(SimEventChannel, KickOnAPortTheGuestClosedIsDropped) {
  const evtchn_port gport = guest_ev_->alloc_unbound(backend_id);
  const evtchn_port local = bind(*be_, gport);
  guest_ev_->close(gport);
  be_->notify(local);  // must not reach anyone, nor fail
  EXPECT_FALSE(readable(guest_ev_->fd(), 20));
  std::error_code ec;
  be_->bind_interdomain(guest_id, gport, ec);
  EXPECT_EQ(ec, std::errc::invalid_argument);
}

TEST_F(SimEventChannel, GuestForgedDoorbellsForUnknownPortsYieldNothing) {
  const evtchn_port gport = guest_ev_->alloc_unbound(backend_id);
  bind(*be_, gport);
  // A hostile guest rings the backend's socket without latching anything.
  auto& e = guest_->raw_port(gport.value());
  const auto addr = sim::endpoint::address_of(dir_, sim::shared(e.binder_endpoint).load());
  ASSERT_TRUE(addr);
  sim::endpoint rogue(dir_);
  for (std::uint32_t junk : {0U, 12345U, 0xffffffffU}) {
    ASSERT_FALSE(rogue.send_doorbell(*addr, junk));
  }
  EXPECT_TRUE(drain(
                  be_->fd(), [&] { return be_->pending(); }, 20)
                  .empty());
}

}  // namespace
}  // namespace unetback::test
