#include "sim_fixture.hpp"

#include <stdlib.h>

#include <array>
#include <stdexcept>
#include <string>

namespace unetback::xs::testing {

bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
               std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
  }
  return true;
}

void sim_xenstore_test::SetUp() {
  dir_ = std::make_unique<temp_dir>("unetback-xs-");
  server_ = std::make_unique<sim::threaded_server>(dir_->path());
}

void sim_xenstore_test::TearDown() {
  server_.reset();
  dir_.reset();
}

client sim_xenstore_test::dom0() {
  return client::open(server_->socket_path().string());
}

void sim_xenstore_test::introduce(domid d) {
  client tool = dom0();
  const std::string home = tool.get_domain_path(d);
  ASSERT_TRUE(xs_introduce_domain(tool.native_handle(), d.value(), 1000U + d.value(), 7U));
  // libxl__domain_make: the home belongs to the guest; its domid key is
  // dom0's, readable by the guest.
  tool.mkdir(home);
  const std::array<permission, 1> owned{permission{d, access::none}};
  tool.set_permissions(home, owned);
  tool.write(home + "/domid", std::to_string(d.value()));
  const std::array<permission, 2> ro{permission{domid{0}, access::none},
                                     permission{d, access::read}};
  tool.set_permissions(home + "/domid", ro);
}

client sim_xenstore_test::guest(domid d) {
  introduce(d);
  return client::open(server_->domain_socket_path(d).string());
}

}  // namespace unetback::xs::testing
