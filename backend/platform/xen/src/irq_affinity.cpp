#include "irq_affinity.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "unetback/util/rate_limit.hpp"

namespace unetback::platform::xen_irq {
namespace {

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) {
    return {};
  }
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::optional<unsigned> number(std::string_view s) {
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end == s.data()) {
    return std::nullopt;
  }
  return v;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

std::vector<unsigned> irqs_named(std::string_view proc_interrupts, std::string_view name) {
  std::vector<unsigned> out;
  while (!proc_interrupts.empty()) {
    const auto nl = proc_interrupts.find('\n');
    const std::string_view line = trim(proc_interrupts.substr(0, nl));
    proc_interrupts = nl == std::string_view::npos ? "" : proc_interrupts.substr(nl + 1);
    const auto colon = line.find(':');
    const auto last = line.find_last_of(" \t");
    if (colon == std::string_view::npos || last == std::string_view::npos ||
        line.substr(last + 1) != name) {
      continue;
    }
    if (const auto irq = number(line.substr(0, colon))) {
      out.push_back(*irq);
    }
  }
  return out;
}

std::optional<unsigned> first_cpu(std::string_view cpu_list) {
  const std::string_view s = trim(cpu_list);
  return number(s.substr(0, s.find_first_of(",-")));
}

std::optional<unsigned> colocate_irqs(const std::string& name) {
  const std::vector<unsigned> irqs = irqs_named(read_file("/proc/interrupts"), name);
  if (irqs.empty()) {
    return std::nullopt;
  }
  const std::string dir = "/proc/irq/" + std::to_string(irqs[0]) + "/";
  const auto cpu = first_cpu(read_file(dir + "effective_affinity_list"));
  if (!cpu) {
    return std::nullopt;
  }
  for (std::size_t i = 1; i < irqs.size(); ++i) {
    std::ofstream out("/proc/irq/" + std::to_string(irqs[i]) + "/smp_affinity_list");
    out << *cpu << '\n';
    out.flush();
    if (!out) {
      UNETBACK_LOG_RATELIMITED(spdlog::level::warn, "{}: could not move IRQ {} to CPU {}", name,
                               irqs[i], *cpu);
      return std::nullopt;
    }
  }
  return cpu;
}

}  // namespace unetback::platform::xen_irq
