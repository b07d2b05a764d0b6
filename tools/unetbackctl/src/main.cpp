// unetbackctl: list vifs, show per-queue counters (table or --json, --watch),
// dump ring indices, change the daemon's log level, disable/enable a vif,
// kick a vif's queues, show the guest's hash configuration, print the
// daemon's metrics in the Prometheus text format.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "client.hpp"
#include "render.hpp"
#include "unetback/ctl/control_protocol.hpp"
#include "unetback/util/guarded_main.hpp"

namespace {

using nlohmann::json;
using unetback::ctl::call;

struct options {
  std::string socket{unetback::ctl::default_socket_path};
  std::string vif;
  std::string level;
  bool as_json = false;
  bool all = false;
  double watch_s = 0;
  unsigned count = 0;             ///< with --watch: stop after this many refreshes (0: never)
  std::optional<unsigned> queue;  ///< kick: only this queue
};

json kick_request(const options& o) {
  json req{{"cmd", "kick"}, {"vif", o.vif}};
  if (o.queue) {
    req["queue"] = *o.queue;
  }
  return req;
}

// "kicked vif1.0 queues 0 1" (what the daemon asked its workers to do).
std::string kicked_text(const options& o, const json& r) {
  std::string queues;
  for (const auto& q : r.value("kicked", json::array())) {
    queues += fmt::format(" {}", q.get<unsigned>());
  }
  return fmt::format("kicked {} queue{}{}\n", o.vif,
                     r.value("kicked", json::array()).size() == 1 ? "" : "s",
                     queues.empty() ? " (none running)" : queues);
}

json stats_request(const options& o) {
  json req{{"cmd", "stats"}};
  if (!o.vif.empty()) {
    req["vif"] = o.vif;
  }
  return req;
}

int show_stats(const options& o) {
  for (unsigned shown = 1;; ++shown) {
    const auto result = call(o.socket, stats_request(o));
    if (o.watch_s > 0) {
      std::fputs("\x1b[H\x1b[2J", stdout);  // clear the terminal between refreshes
    }
    const auto text =
        o.as_json ? result.dump(2) + "\n" : unetback::ctl::render_stats(result, o.all);
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    if (o.watch_s <= 0 || shown == o.count) {
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(o.watch_s));
  }
}

}  // namespace

namespace {

int run_program(int argc, char** argv) {
  CLI::App app{"unetbackctl: inspect and steer a running unetbackd"};
  options o;
  app.add_option("--socket", o.socket, "unetbackd's control socket")->capture_default_str();
  app.require_subcommand(1);
  auto* list = app.add_subcommand("list", "list vifs and their xenbus states");
  list->add_flag("--json", o.as_json, "print JSON");
  auto* stats = app.add_subcommand("stats", "per-queue counters");
  stats->add_option("vif", o.vif, "only this vif (e.g. vif3.0)");
  stats->add_flag("--json", o.as_json, "print JSON");
  stats->add_flag("--all", o.all, "also counters that are zero");
  auto* watch =
      stats->add_option("--watch", o.watch_s, "refresh every SECONDS")->check(CLI::PositiveNumber);
  stats->add_option("--count", o.count, "with --watch: stop after N refreshes")
      ->check(CLI::PositiveNumber)
      ->needs(watch);
  auto* dump = app.add_subcommand("dump", "ring indices per queue (like io_ring_qN)");
  dump->add_option("vif", o.vif)->required();
  auto* level = app.add_subcommand("log-level", "set the daemon's log level");
  level->add_option("level", o.level, "trace|debug|info|warn|err|critical|off")->required();
  auto* disable = app.add_subcommand("disable", "stop a vif's queues (state stays Connected)");
  disable->add_option("vif", o.vif, "the vif (e.g. vif3.0)")->required();
  auto* enable = app.add_subcommand("enable", "resume a disabled vif's queues");
  enable->add_option("vif", o.vif, "the vif (e.g. vif3.0)")->required();
  auto* kick = app.add_subcommand("kick", "notify the guest and re-read a vif's rings");
  kick->add_option("vif", o.vif, "the vif (e.g. vif3.0)")->required();
  kick->add_option("queue", o.queue, "only this queue (default: every queue)");
  auto* hash = app.add_subcommand("hash", "the guest's receive-hash configuration");
  hash->add_option("vif", o.vif, "the vif (e.g. vif3.0)")->required();
  hash->add_flag("--json", o.as_json, "print JSON");
  app.add_subcommand("metrics", "every counter in the Prometheus text format (0.0.4)");
  CLI11_PARSE(app, argc, argv);

  try {
    if (*list) {
      const auto r = call(o.socket, {{"cmd", "list"}});
      std::fputs(o.as_json ? (r.dump(2) + "\n").c_str() : unetback::ctl::render_vif_list(r).c_str(),
                 stdout);
    } else if (*stats) {
      return show_stats(o);
    } else if (*dump) {
      const auto r = call(o.socket, {{"cmd", "dump"}, {"vif", o.vif}});
      for (const auto& q : r.at("queues")) {
        std::printf("queue %d:\n%s\n", q.value("queue", 0), q.value("dump", "").c_str());
      }
    } else if (*level) {
      call(o.socket, {{"cmd", "log-level"}, {"level", o.level}});
    } else if (*disable) {
      call(o.socket, {{"cmd", "disable"}, {"vif", o.vif}});
      std::printf("%s disabled\n", o.vif.c_str());
    } else if (*enable) {
      const auto r = call(o.socket, {{"cmd", "enable"}, {"vif", o.vif}});
      std::printf("%s %s\n", o.vif.c_str(),
                  r.value("was_disabled", false) ? "enabled" : "was not disabled");
    } else if (*kick) {
      std::fputs(kicked_text(o, call(o.socket, kick_request(o))).c_str(), stdout);
    } else if (*hash) {
      const auto r = call(o.socket, {{"cmd", "hash"}, {"vif", o.vif}});
      std::fputs(o.as_json ? (r.dump(2) + "\n").c_str() : unetback::ctl::render_hash(r).c_str(),
                 stdout);
    } else if (app.got_subcommand("metrics")) {
      std::fputs(call(o.socket, {{"cmd", "metrics"}}).value("text", "").c_str(), stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unetbackctl: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return unetback::util::guarded_main("unetbackctl", [&] { return run_program(argc, argv); });
}
