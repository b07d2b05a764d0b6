#pragma once
// A queue's private packet buffer, mapped straight from the kernel
// (anonymous mmap) rather than taken from the heap: its pages come zeroed
// and are faulted in only when a sweep first touches them. A std::vector
// would zero-fill every byte at queue set-up (most of a queue's set-up cost;
// the rx buffer alone is rx-backlog-bytes) and, from the heap, could hand a
// queue memory that last held another guest's frames.

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

#include "unetback/rings/shared_ring.hpp"

namespace unetback::datapath {

/// Bytes of a page: a grant copy never crosses one, and frames are placed on them.
inline constexpr auto page_bytes = static_cast<std::uint32_t>(rings::page_size);

class page_buffer {
 public:
  /// Throws std::bad_alloc when the kernel refuses the mapping.
  explicit page_buffer(std::size_t size) : size_(size) {
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      throw std::bad_alloc();
    }
    data_ = static_cast<std::byte*>(p);
  }
  page_buffer(const page_buffer&) = delete;
  page_buffer& operator=(const page_buffer&) = delete;
  ~page_buffer() { ::munmap(data_, size_); }

  [[nodiscard]] std::byte* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::byte* begin() const { return data_; }
  [[nodiscard]] std::byte* end() const { return data_ + size_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_;
};

}  // namespace unetback::datapath
