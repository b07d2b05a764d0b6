// payload-check: end-to-end payload integrity through the vif path.
//   payload-check tcp-send --to A:P --bytes N --seed S [--max-io B]
//   payload-check tcp-recv --listen A:P --bytes N --seed S [--max-io B] [--timeout SEC]
//   payload-check udp-send --to A:P --bytes N --seed S [--max-datagram B] [--rate-mbit R]
//   payload-check udp-recv --listen A:P --seed S [--idle-ms MS] [--rcvbuf B]
// Prints one JSON line with the figures; exit 0 when "ok", 1 when the check
// failed (corruption, loss on TCP), 2 on usage or socket errors.

#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "modes.hpp"

namespace pc = unetback::payload_check;

namespace {

CLI::App* add_mode(CLI::App& app, const char* name, const char* what, pc::mode_options& o,
                   bool sender) {
  CLI::App* sub = app.add_subcommand(name, what);
  sub->add_option(sender ? "--to" : "--listen", o.endpoint, "A.B.C.D:PORT")->required();
  sub->add_option("--seed", o.seed, "payload and size seed (both ends alike)");
  sub->add_option("--timeout", o.timeout_s, "seconds to wait for the peer / for data");
  return sub;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"payload-check: seeded payload through the vif path, verified byte by byte"};
  app.require_subcommand(1);
  pc::mode_options o;
  CLI::App* ts = add_mode(app, "tcp-send", "write the stream over TCP", o, true);
  CLI::App* tr = add_mode(app, "tcp-recv", "accept one connection, verify the stream", o, false);
  CLI::App* us = add_mode(app, "udp-send", "send the stream as datagrams", o, true);
  CLI::App* ur = add_mode(app, "udp-recv", "receive and verify datagrams until idle", o, false);
  for (CLI::App* sub : {ts, tr, us}) {
    sub->add_option("--bytes", o.bytes, "stream length / UDP payload total")->required();
  }
  for (CLI::App* sub : {ts, tr}) {
    sub->add_option("--max-io", o.max_io, "largest write/read (random in 1..B)");
  }
  us->add_option("--max-datagram", o.max_datagram, "largest datagram incl. 16-byte header");
  us->add_option("--rate-mbit", o.rate_mbit, "pace the sender (0: as fast as possible)");
  ur->add_option("--idle-ms", o.idle_ms, "stop after this long without a datagram");
  ur->add_option("--rcvbuf", o.rcvbuf, "SO_RCVBUF bytes");
  CLI11_PARSE(app, argc, argv);
  try {
    nlohmann::json result = ts->parsed()   ? pc::tcp_send(o)
                            : tr->parsed() ? pc::tcp_recv(o)
                            : us->parsed() ? pc::udp_send(o)
                                           : pc::udp_recv(o);
    result["seed"] = o.seed;
    std::printf("%s\n", result.dump().c_str());
    return result.value("ok", false) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "payload-check: %s\n", e.what());
    return 2;
  }
}
