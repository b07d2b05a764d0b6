// unetbackd: userspace Xen network backend (see unetbackd(8)).

#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "run.hpp"
#include "unetback/daemon/options.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = unetback::daemon::parse_command_line(args);
  if (const auto* stop = std::get_if<unetback::daemon::early_exit>(&parsed)) {
    std::fputs(stop->message.c_str(), stop->status == 0 ? stdout : stderr);
    std::fputc('\n', stop->status == 0 ? stdout : stderr);
    return stop->status;
  }
  return unetback::daemon::run(std::get<unetback::daemon::daemon_options>(parsed));
}
