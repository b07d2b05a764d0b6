// unetback-grant-copy-probe: what one GNTTABOP_copy segment costs on this Xen,
// through the two ways a dom0 process can issue it (issue #15, docs/performance.md
// "What a grant copy costs"):
//   gntdev     the daemon's own grant table (platform::xen_platform, over
//              xengnttab_grant_copy / IOCTL_GNTDEV_GRANT_COPY), as its workers use it. The kernel
//              pins the local page of every segment and issues the hypercall in batches of at most
//              16 segments. gref_to_gref through gntdev pins nothing: the guest-to-guest copy of
//              the direct path's stage (b) (docs/direct-path.md).
//   hypercall  GNTTABOP_copy through privcmd (libxencall), both sides grant refs,
//              the local buffers granted once to this domain itself (gntalloc):
//              one hypercall per batch and no page pinning per segment.
// The foreign side is a page this domain granted to itself through gntalloc, so
// the probe needs no guest; Xen treats it like any granted page. Each batch's
// statuses are checked and the copied bytes compared. One line of key=value
// pairs per configuration.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
// The Xen 4.17 headers have no extern "C" guards and need <stdint.h> first.
extern "C" {
#include <xen/grant_table.h>
#include <xen/sys/gntalloc.h>
#include <xen/xen.h>
#include <xencall.h>
}

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "unetback/platform/grant_table.hpp"
#include "unetback/platform/xen/xen_platform.hpp"

namespace {

constexpr std::size_t page = 4096;

[[noreturn]] void die(const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

/// Pages this domain granted to `domid` (itself) through /dev/xen/gntalloc.
class self_granted_pages {
 public:
  self_granted_pages(std::uint16_t domid, std::uint32_t count) : count_(count) {
    fd_ = ::open("/dev/xen/gntalloc", O_RDWR | O_CLOEXEC);
    if (fd_ < 0) {
      die("open /dev/xen/gntalloc (modprobe xen-gntalloc)");
    }
    std::vector<std::byte> arg(sizeof(ioctl_gntalloc_alloc_gref) + count * sizeof(std::uint32_t));
    auto* op = reinterpret_cast<ioctl_gntalloc_alloc_gref*>(arg.data());
    op->domid = domid;
    op->flags = GNTALLOC_FLAG_WRITABLE;
    op->count = count;
    if (::ioctl(fd_, IOCTL_GNTALLOC_ALLOC_GREF, op) != 0) {
      die("IOCTL_GNTALLOC_ALLOC_GREF");
    }
    refs_.assign(op->gref_ids, op->gref_ids + count);
    void* p = ::mmap(nullptr, count * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                     static_cast<off_t>(op->index));
    if (p == MAP_FAILED) {
      die("mmap gntalloc");
    }
    data_ = static_cast<std::byte*>(p);
  }
  self_granted_pages(const self_granted_pages&) = delete;
  self_granted_pages& operator=(const self_granted_pages&) = delete;
  ~self_granted_pages() {
    ::munmap(data_, count_ * page);
    ::close(fd_);  // the grants end with the last reference to them
  }
  [[nodiscard]] grant_ref_t ref(std::size_t i) const { return refs_[i]; }
  [[nodiscard]] std::byte* at(std::size_t i) const { return data_ + i * page; }

 private:
  int fd_ = -1;
  std::uint32_t count_;
  std::vector<grant_ref_t> refs_;
  std::byte* data_ = nullptr;
};

/// What a segment copies between: a grant ref or the probe's own memory.
enum class copy_sides { gref_to_local, local_to_gref, gref_to_gref };

/// One measured configuration.
struct result {
  std::uint64_t segments = 0;
  std::uint64_t calls = 0;
  std::uint64_t failed_segments = 0;
  std::uint64_t wrong_bytes = 0;
  double wall_ns = 0;
  double cpu_ns = 0;
};

double now_ns(clockid_t c) {
  timespec ts{};
  ::clock_gettime(c, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

/// Runs `call` `rounds` times and times it; `call` returns its failed segments.
template <class Call>
result timed(std::uint32_t rounds, std::uint32_t batch, Call&& call) {
  result r;
  const double w0 = now_ns(CLOCK_MONOTONIC);
  const double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
  for (std::uint32_t i = 0; i < rounds; ++i) {
    r.failed_segments += call();
  }
  r.cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
  r.wall_ns = now_ns(CLOCK_MONOTONIC) - w0;
  r.calls = rounds;
  r.segments = std::uint64_t{rounds} * batch;
  return r;
}

struct probe_config {
  std::uint16_t domid = 0;
  std::uint32_t rounds = 2000;
  std::vector<std::uint32_t> batches{1, 16, 64};
  std::vector<std::uint32_t> lengths{64, 1500, 4096};
};

class probe {
 public:
  explicit probe(const probe_config& c)
      : cfg_(c), source_(c.domid, max_batch()), dest_(c.domid, max_batch()) {
    xcall_ = xencall_open(nullptr, 0);
    if (xcall_ == nullptr) {
      die("xencall_open");
    }
    void* local = ::mmap(nullptr, max_batch() * page, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (local == MAP_FAILED) {
      die("mmap");
    }
    local_ = static_cast<std::byte*>(local);
    ops_ = static_cast<gnttab_copy_t*>(
        xencall_alloc_buffer(xcall_, max_batch() * sizeof(gnttab_copy_t)));
    if (ops_ == nullptr) {
      die("xencall_alloc_buffer");
    }
    for (std::uint32_t i = 0; i < max_batch(); ++i) {
      std::memset(source_.at(i), static_cast<int>(0x40 + i % 64), page);
    }
  }
  probe(const probe&) = delete;
  probe& operator=(const probe&) = delete;
  ~probe() {
    xencall_free_buffer(xcall_, ops_);
    ::munmap(local_, max_batch() * page);
    xencall_close(xcall_);
  }

  void run_all() {
    for (const std::uint32_t len : cfg_.lengths) {
      for (const std::uint32_t batch : cfg_.batches) {
        report("gntdev", "gref_to_local", len, batch,
               gntdev_round(len, batch, copy_sides::gref_to_local));
        report("gntdev", "local_to_gref", len, batch,
               gntdev_round(len, batch, copy_sides::local_to_gref));
        report("gntdev", "gref_to_gref", len, batch,
               gntdev_round(len, batch, copy_sides::gref_to_gref));
        report("hypercall", "gref_to_gref", len, batch, hypercall_round(len, batch));
      }
    }
  }

 private:
  [[nodiscard]] std::uint32_t max_batch() const {
    std::uint32_t m = 1;
    for (const std::uint32_t b : cfg_.batches) {
      m = std::max(m, b);
    }
    return m;
  }

  /// One gntdev segment of `sides` for page i.
  [[nodiscard]] unetback::platform::grant_copy_segment gntdev_segment(copy_sides sides,
                                                                      std::uint32_t i,
                                                                      std::uint32_t len) const {
    unetback::platform::grant_copy_segment s{};
    s.len = static_cast<std::uint16_t>(len);
    if (sides == copy_sides::local_to_gref) {
      s.source.virt = source_.at(i);
    } else {
      s.source.foreign = {source_.ref(i), 0, cfg_.domid};
      s.flags |= GNTCOPY_source_gref;
    }
    if (sides == copy_sides::gref_to_local) {
      s.dest.virt = local_ + std::size_t{i} * page;
    } else {
      s.dest.foreign = {dest_.ref(i), 0, cfg_.domid};
      s.flags |= GNTCOPY_dest_gref;
    }
    return s;
  }

  result gntdev_round(std::uint32_t len, std::uint32_t batch, copy_sides sides) {
    std::vector<unetback::platform::grant_copy_segment> segs(batch);
    auto call = [&] {
      for (std::uint32_t i = 0; i < batch; ++i) {
        segs[i] = gntdev_segment(sides, i, len);
      }
      std::uint64_t failed = 0;
      if (!gnttab_->copy(segs)) {
        return std::uint64_t{batch};
      }
      for (const auto& s : segs) {
        failed += s.status != GNTST_okay ? 1 : 0;
      }
      return failed;
    };
    std::byte* dest = sides == copy_sides::gref_to_local ? local_ : dest_.at(0);
    std::memset(dest, 0, std::size_t{batch} * page);  // a stale copy must not pass
    result r = timed(cfg_.rounds, batch, call);
    r.wrong_bytes = compare(dest, len, batch);
    return r;
  }

  result hypercall_round(std::uint32_t len, std::uint32_t batch) {
    auto call = [&] {
      for (std::uint32_t i = 0; i < batch; ++i) {
        gnttab_copy_t& op = ops_[i];
        op = {};
        op.source.u.ref = source_.ref(i);
        op.source.domid = cfg_.domid;
        op.dest.u.ref = dest_.ref(i);
        op.dest.domid = cfg_.domid;
        op.len = static_cast<std::uint16_t>(len);
        op.flags = GNTCOPY_source_gref | GNTCOPY_dest_gref;
      }
      if (xencall3(xcall_, __HYPERVISOR_grant_table_op, GNTTABOP_copy,
                   reinterpret_cast<std::uintptr_t>(ops_), batch) != 0) {
        return std::uint64_t{batch};
      }
      std::uint64_t failed = 0;
      for (std::uint32_t i = 0; i < batch; ++i) {
        failed += ops_[i].status != GNTST_okay ? 1 : 0;
      }
      return failed;
    };
    std::memset(dest_.at(0), 0, std::size_t{batch} * page);
    result r = timed(cfg_.rounds, batch, call);
    r.wrong_bytes = compare(dest_.at(0), len, batch);
    return r;
  }

  /// Bytes of the last batch (segment i in the destination's page i) that
  /// differ from the source's.
  std::uint64_t compare(const std::byte* dest, std::uint32_t len, std::uint32_t batch) const {
    std::uint64_t wrong = 0;
    for (std::uint32_t i = 0; i < batch; ++i) {
      for (std::uint32_t b = 0; b < len; ++b) {
        wrong += dest[i * page + b] != source_.at(i)[b] ? 1U : 0U;
      }
    }
    return wrong;
  }

  static void report(const char* path, const char* sides, std::uint32_t len, std::uint32_t batch,
                     const result& r) {
    const double segs = static_cast<double>(r.segments);
    fmt::print(
        "path={} sides={} len={} batch={} calls={} segments={} failed_segments={} wrong_bytes={} "
        "wall_ns_per_segment={:.0f} cpu_ns_per_segment={:.0f} wall_ns_per_call={:.0f}\n",
        path, sides, len, batch, r.calls, r.segments, r.failed_segments, r.wrong_bytes,
        r.wall_ns / segs, r.cpu_ns / segs, r.wall_ns / static_cast<double>(r.calls));
    std::fflush(stdout);
  }

  probe_config cfg_;
  self_granted_pages source_;
  self_granted_pages dest_;
  std::unique_ptr<unetback::platform::grant_table> gnttab_ =
      unetback::platform::xen_platform(unetback::domid{cfg_.domid}).open_grant_table();
  xencall_handle* xcall_ = nullptr;
  std::byte* local_ = nullptr;
  gnttab_copy_t* ops_ = nullptr;
};

int run(int argc, char** argv) {
  probe_config cfg;
  CLI::App app{
      "unetback-grant-copy-probe: the cost of one GNTTABOP_copy segment, gntdev vs privcmd"};
  app.add_option("--domid", cfg.domid, "this domain's id (0 in dom0)");
  app.add_option("--rounds", cfg.rounds, "batches per configuration")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--batch", cfg.batches, "segments per call")->check(CLI::Range(1, 256));
  app.add_option("--len", cfg.lengths, "bytes per segment")->check(CLI::Range(1, 4096));
  CLI11_PARSE(app, argc, argv);
  probe p(cfg);
  p.run_all();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unetback-grant-copy-probe: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "unetback-grant-copy-probe: unknown error\n");
  }
  return 1;
}
