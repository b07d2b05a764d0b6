#pragma once
// The Prometheus text exposition format, version 0.0.4: metric families,
// each a HELP and a TYPE line followed by its samples. Label values and HELP
// texts are escaped here (label values carry names that come from the guest
// and XenStore), so no caller writes the format by hand.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace unetback::metrics {

/// The Content-Type of the text this writes.
inline constexpr std::string_view content_type = "text/plain; version=0.0.4; charset=utf-8";

/// A sample's labels, in the order they are written.
using labels = std::vector<std::pair<std::string, std::string>>;

/// Family types used here (Prometheus TYPE line).
enum class metric_type : std::uint8_t { counter, gauge };

/// A label value with `\`, `"` and newline escaped as the format demands.
[[nodiscard]] std::string escape_label_value(std::string_view value);
/// A HELP text with `\` and newline escaped.
[[nodiscard]] std::string escape_help(std::string_view help);

class exposition {
 public:
  /// Starts family `name` (its HELP and TYPE lines). Samples of one family
  /// must follow its start, before the next family.
  void family(std::string_view name, metric_type type, std::string_view help);
  /// One sample of the current family; `name` is the family's name.
  void sample(std::string_view name, const labels& l, std::uint64_t value);
  void sample(std::string_view name, const labels& l, double value);
  /// The text so far.
  [[nodiscard]] const std::string& text() const { return out_; }

 private:
  void sample_prefix(std::string_view name, const labels& l);
  std::string out_;
};

}  // namespace unetback::metrics
