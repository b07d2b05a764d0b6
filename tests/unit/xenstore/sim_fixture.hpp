#pragma once
// A sim-xenstored on a thread in a fresh temporary directory, plus helpers to
// act like the toolstack (introduce a domain, create its home) and to run an
// io_context until a condition holds.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>

#include "unetback/test_support/temp_dir.hpp"
#include "unetback/xs/client.hpp"
#include "unetback/xs/sim/threaded_server.hpp"

namespace unetback::xs::testing {

using test_support::temp_dir;

/// Runs `io` until `done()` holds or `timeout` passes; returns done().
bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
               std::chrono::milliseconds timeout = std::chrono::milliseconds(3000));

class sim_xenstore_test : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  /// A privileged (dom0) connection.
  client dom0();
  /// Introduces `d` like the toolstack does (INTRODUCE; /local/domain/<d>
  /// owned by d; domid key owned by dom0, readable by d) and connects as d.
  client guest(domid d);
  /// INTRODUCE + home dir only.
  void introduce(domid d);

  std::unique_ptr<temp_dir> dir_;
  std::unique_ptr<sim::threaded_server> server_;
};

}  // namespace unetback::xs::testing
