#include "unetback/metrics/exposition.hpp"

#include <fmt/format.h>

namespace unetback::metrics {

namespace {

// `\` and newline always; `"` only inside label values.
std::string escaped(std::string_view text, bool quote) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string escape_label_value(std::string_view value) {
  return escaped(value, true);
}

std::string escape_help(std::string_view help) {
  return escaped(help, false);
}

void exposition::family(std::string_view name, metric_type type, std::string_view help) {
  out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape_help(help), name,
                      type == metric_type::counter ? "counter" : "gauge");
}

void exposition::sample_prefix(std::string_view name, const labels& l) {
  out_ += name;
  if (l.empty()) {
    out_ += ' ';
    return;
  }
  out_ += '{';
  for (std::size_t i = 0; i < l.size(); ++i) {
    out_ +=
        fmt::format("{}{}=\"{}\"", i == 0 ? "" : ",", l[i].first, escape_label_value(l[i].second));
  }
  out_ += "} ";
}

void exposition::sample(std::string_view name, const labels& l, std::uint64_t value) {
  sample_prefix(name, l);
  out_ += fmt::format("{}\n", value);
}

void exposition::sample(std::string_view name, const labels& l, double value) {
  sample_prefix(name, l);
  out_ += fmt::format("{}\n", value);
}

}  // namespace unetback::metrics
