// Fuzzes what a restarted daemon does with a saved hash configuration
// (hash_config_file + rings::ctrl_handler::restore). The file is the
// daemon's own, but what it holds came from a guest's control-ring requests
// and may be damaged or left by another version. The first byte picks the
// queue count; the second the mode:
//   * even: the rest of the input is the file, loaded and restored. A
//     refused configuration changes nothing; an accepted one keeps every
//     mapping entry below the queue count and selects only valid queues.
//   * odd: the rest is a sequence of 16-byte control requests handled by a
//     first handler; its configuration is saved, loaded and restored into a
//     second. Restore must accept and reproduce exactly what valid requests
//     built (a configuration lost over a restart would re-steer the guest).

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "hash_config_file.hpp"
#include "unetback/rings/ctrl_ring.hpp"

namespace {

using namespace unetback::rings;  // NOLINT(google-build-using-namespace)
namespace control = unetback::control;

void require(bool ok) {
  if (!ok) {
    std::abort();
  }
}

/// One scratch file per process, rewritten by every input.
const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string p = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
                    "/unetback-hash-restore-fuzz.XXXXXX";
    const int fd = ::mkstemp(p.data());
    require(fd >= 0);
    ::close(fd);
    return p;
  }();
  return path;
}

void write_file(std::span<const std::uint8_t> bytes) {
  const int fd = ::open(scratch_path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  require(fd >= 0);
  require(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

void check_valid(const hash_config& cfg, std::uint32_t num_queues) {
  require(cfg.mapping_size <= max_hash_mapping_size);
  for (std::uint32_t i = 0; i < cfg.mapping_size; ++i) {
    require(cfg.mapping[i] < num_queues);
  }
  for (const std::uint32_t hash : {0U, 1U, 0x7fffffffU, 0xffffffffU, cfg.mapping_size}) {
    require(cfg.select_queue(hash, num_queues) < num_queues);
  }
}

void restore_file(std::span<const std::uint8_t> file, std::uint32_t num_queues) {
  write_file(file);
  ctrl_handler handler(num_queues);
  const hash_config before = handler.config();
  const auto loaded = control::load_hash_config(scratch_path());
  if (!loaded || !handler.restore(*loaded)) {
    require(handler.config() == before && handler.generation() == 0);
    return;
  }
  require(handler.config() == *loaded && handler.generation() == 1);
  check_valid(handler.config(), num_queues);
}

void round_trip(std::span<const std::uint8_t> requests, std::uint32_t num_queues) {
  std::array<std::byte, 4096> page{};
  const std::size_t page_bytes = std::min(requests.size(), std::size_t{64});
  std::memcpy(page.data(), requests.data(), page_bytes);
  requests = requests.subspan(page_bytes);
  const auto reader = [&page](unetback::grant_ref ref, std::span<std::byte> dest) {
    if ((ref.value() & 1U) != 0 || dest.size() > page.size()) {
      return false;
    }
    std::memcpy(dest.data(), page.data(), dest.size());
    return true;
  };
  ctrl_handler guest_side(num_queues);
  while (requests.size() >= sizeof(ctrl_request)) {
    ctrl_request req;
    std::memcpy(&req, requests.data(), sizeof(req));
    requests = requests.subspan(sizeof(req));
    (void)guest_side.handle(req, reader);
  }
  control::save_hash_config(scratch_path(), guest_side.config());
  const auto loaded = control::load_hash_config(scratch_path());
  require(loaded.has_value() && *loaded == guest_side.config());
  ctrl_handler restarted(num_queues);
  require(restarted.restore(*loaded));
  require(restarted.config() == guest_side.config());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) {
    return 0;
  }
  const std::uint32_t num_queues = 1U + (data[0] % 16U);
  const std::span<const std::uint8_t> rest(data + 2, size - 2);
  if ((data[1] & 1U) == 0) {
    restore_file(rest, num_queues);
  } else {
    round_trip(rest, num_queues);
  }
  return 0;
}
