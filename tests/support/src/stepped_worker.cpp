#include "unetback/test_support/stepped_worker.hpp"

#include <poll.h>

#include <string>
#include <system_error>

namespace unetback::test_support {
namespace {

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLERR | POLLHUP)) != 0;
}

evtchn_port bind(platform::event_channel& channel, domid frontend, evtchn_port remote) {
  std::error_code ec;
  const evtchn_port local = channel.bind_interdomain(frontend, remote, ec);
  if (ec) {
    throw std::system_error(ec, "bind event channel " + std::to_string(remote.value()));
  }
  return local;
}

}  // namespace

stepped_worker::stepped_worker(platform::platform& platform, const datapath::queue_config& config,
                               std::unique_ptr<platform::frame_port> tap,
                               std::shared_ptr<datapath::vif_shared_state> shared)
    : config_(config),
      tap_(std::move(tap)),
      shared_(std::move(shared)),
      state_(config_),
      tx_responses_(state_.data().tx),
      rx_responses_(state_.data().rx),
      grants_(platform.open_grant_table()),
      channel_(platform.open_event_channel()) {
  tx_.emplace(datapath::map_back_ring<rings::tx_back_ring>(*grants_, config_.frontend,
                                                           config_.tx_ring_ref, "tx-ring-ref"));
  rx_.emplace(datapath::map_back_ring<rings::rx_back_ring>(*grants_, config_.frontend,
                                                           config_.rx_ring_ref, "rx-ring-ref"));
  tx_port_ = bind(*channel_, config_.frontend, config_.tx_port);
  rx_port_ =
      config_.split_event_channels ? bind(*channel_, config_.frontend, config_.rx_port) : tx_port_;
  const datapath::queue_context ctx{config_, state_.data().counters, *shared_,     *grants_,
                                    *tap_,   tx_responses_,          rx_responses_};
  const datapath::worker_rings rings{tx_->ring, rx_->ring, *channel_, tx_port_, rx_port_};
  worker_ = std::make_unique<datapath::worker>(ctx, rings, -1, stopping_, published_);
}

stepped_worker::~stepped_worker() {
  worker_.reset();
  if (rx_port_ != tx_port_) {
    channel_->unbind(rx_port_);
  }
  channel_->unbind(tx_port_);
}

datapath::step_result stepped_worker::step(clock::time_point now) {
  return worker_->step(now, datapath::readiness{readable(channel_->fd()), readable(tap_->fd())});
}

std::optional<datapath::sweep_fault> stepped_worker::settle(clock::time_point now, int max_steps) {
  settled_ = false;
  for (int i = 0; i < max_steps; ++i) {
    const datapath::step_result r = step(now);
    if (r.fault) {
      return r.fault;
    }
    if (!r.again && !final_check()) {
      settled_ = true;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

bool stepped_worker::final_check() {
  return worker_->final_check();
}

int stepped_worker::poll_timeout_ms(clock::time_point now) const {
  return worker_->poll_timeout_ms(now);
}

}  // namespace unetback::test_support
