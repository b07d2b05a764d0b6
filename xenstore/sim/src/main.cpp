// sim-xenstored: a xenstored for tests and the simulated platform.
//   sim-xenstored --dir DIR [--pid-file FILE] [--foreground]
// Serves DIR/socket (dom0) and DIR/socket.d<D> for introduced domains.
// Runs in the foreground (the only mode); SIGINT/SIGTERM stop it cleanly.

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "unetback/util/guarded_main.hpp"
#include "unetback/xs/sim/server.hpp"

namespace {

struct cli_options {
  std::string dir = "/run/unetback-sim/xenstored";
  std::string pid_file;
  bool foreground = true;
};

void write_pid_file(const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  out << ::getpid() << '\n';
  if (!out) {
    throw std::runtime_error("cannot write pid file " + path);
  }
}

int serve(const cli_options& opts) {
  boost::asio::io_context io;
  unetback::xs::sim::server_options so;
  so.dir = opts.dir;
  unetback::xs::sim::server srv(io, so);
  if (!opts.pid_file.empty()) {
    write_pid_file(opts.pid_file);
  }
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&io](const boost::system::error_code&, int) { io.stop(); });
  spdlog::info("sim-xenstored: serving {}", srv.socket_path().string());
  io.run();
  if (!opts.pid_file.empty()) {
    std::error_code ignored;
    std::filesystem::remove(opts.pid_file, ignored);
  }
  return 0;
}

}  // namespace

namespace {

int run_program(int argc, char** argv) {
  CLI::App app{"sim-xenstored: xenstored wire protocol over Unix sockets"};
  cli_options opts;
  app.add_option("--dir", opts.dir, "directory of the sockets (socket, socket.d<D>)");
  app.add_option("--pid-file", opts.pid_file, "write the process id here");
  app.add_flag("--foreground", opts.foreground, "stay in the foreground (default; the only mode)");
  CLI11_PARSE(app, argc, argv);
  try {
    return serve(opts);
  } catch (const std::exception& e) {
    spdlog::error("sim-xenstored: {}", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  return unetback::util::guarded_main("sim-xenstored", [&] { return run_program(argc, argv); });
}
