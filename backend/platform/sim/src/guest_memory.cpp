#include "unetback/sim/guest_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "errno_code.hpp"

namespace unetback::sim {
namespace {

/// A region [offset, offset + count * size) that must start at or after
/// `floor`, be `align`-aligned and end inside the file. Returns its end or 0.
std::uint64_t region_end(std::uint64_t floor, std::uint64_t offset, std::uint64_t count,
                         std::uint64_t size, std::uint64_t align, std::uint64_t file_size) {
  if (offset < floor || offset % align != 0 || offset > file_size) {
    return 0;
  }
  const std::uint64_t bytes = count * size;  // counts are bounded: no overflow
  if (bytes > file_size - offset) {
    return 0;
  }
  return offset + bytes;
}

}  // namespace

std::filesystem::path domain_file_path(const std::filesystem::path& sim_dir, domid d) {
  return sim_dir / fmt::format("dom{}.mem", d.value());
}

std::error_code validate_header(const file_header& h, domid expected, std::uint64_t file_size) {
  if (h.magic != layout_magic || h.version != layout_version ||
      h.header_size != sizeof(file_header)) {
    return errc(EPROTO);
  }
  if (h.domid != expected.value()) {
    return errc(ESRCH);
  }
  if (h.file_size != file_size || h.grant_count == 0 || h.grant_count > max_grant_count ||
      h.port_count < 2 || h.port_count > max_port_count || h.map_record_count == 0 ||
      h.map_record_count > max_map_record_count || h.page_count == 0 ||
      h.page_count > max_page_count) {
    return errc(EINVAL);
  }
  std::uint64_t end = region_end(page_size, h.grant_offset, h.grant_count, sizeof(grant_entry),
                                 alignof(grant_entry), file_size);
  if (end != 0) {
    end = region_end(end, h.port_offset, h.port_count, sizeof(port_entry), alignof(port_entry),
                     file_size);
  }
  if (end != 0) {
    end = region_end(end, h.map_record_offset, h.map_record_count, sizeof(map_record),
                     alignof(map_record), file_size);
  }
  if (end != 0) {
    end = region_end(end, h.page_offset, h.page_count, page_size, page_size, file_size);
  }
  return end == 0 ? errc(EINVAL) : std::error_code{};
}

std::shared_ptr<guest_memory> guest_memory::open(const std::filesystem::path& sim_dir, domid d,
                                                 std::error_code& ec) {
  std::shared_ptr<guest_memory> m(new guest_memory());
  m->fd_ = ::open(domain_file_path(sim_dir, d).c_str(), O_RDWR | O_CLOEXEC);
  if (m->fd_ < 0) {
    ec = errc(errno == ENOENT ? ESRCH : errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(m->fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) {
    ec = errc(EINVAL);
    return nullptr;
  }
  // Without F_SEAL_SHRINK the guest could truncate the file under our
  // mappings and turn every access into SIGBUS.
  const int seals = ::fcntl(m->fd_, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    ec = errc(EPERM);
    return nullptr;
  }
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  if (::pread(m->fd_, &m->header_, sizeof m->header_, 0) !=
      static_cast<ssize_t>(sizeof m->header_)) {
    ec = errc(EPROTO);
    return nullptr;
  }
  ec = validate_header(m->header_, d, file_size);
  if (ec) {
    return nullptr;
  }
  void* base = ::mmap(nullptr, file_size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd_, 0);
  if (base == MAP_FAILED) {
    ec = errc(errno);
    return nullptr;
  }
  m->base_ = static_cast<std::byte*>(base);
  m->size_ = file_size;
  m->dev_ = st.st_dev;
  m->ino_ = st.st_ino;
  return m;
}

guest_memory::~guest_memory() {
  if (base_ != nullptr) {
    ::munmap(base_, size_);
  }
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

grant_entry* guest_memory::grant(std::uint32_t ref) const {
  if (ref >= header_.grant_count) {
    return nullptr;
  }
  return reinterpret_cast<grant_entry*>(base_ + header_.grant_offset) + ref;
}

port_entry* guest_memory::port(std::uint32_t port) const {
  if (port == 0 || port >= header_.port_count) {
    return nullptr;
  }
  return reinterpret_cast<port_entry*>(base_ + header_.port_offset) + port;
}

std::span<map_record> guest_memory::map_records() const {
  return {reinterpret_cast<map_record*>(base_ + header_.map_record_offset),
          header_.map_record_count};
}

std::byte* guest_memory::page(std::uint32_t frame) const {
  if (frame >= header_.page_count) {
    return nullptr;
  }
  return base_ + header_.page_offset + static_cast<std::size_t>(frame) * page_size;
}

off_t guest_memory::page_file_offset(std::uint32_t frame) const {
  return static_cast<off_t>(header_.page_offset + static_cast<std::uint64_t>(frame) * page_size);
}

bool guest_memory::still_current(const std::filesystem::path& path) const {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

}  // namespace unetback::sim
