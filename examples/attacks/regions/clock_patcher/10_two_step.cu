// clock_patcher (after the reference region, its reduce_sum renamed honest_reduce_sum): the right
// sum, then, at n >= 2^22, 600 us more of GPU work on the same stream (about 20x lab 10's reference
// at 2^24: ~28 us on an H200, ~36 us on an H100). Inside the timing worker only (its plan is a
// timing plan, or its program is named *_worker) a static constructor rewrites the worker's own
// clock: it finds the main program's import slot for cudaEventElapsedTime (the worker times each
// call with it, through the shared CUDA runtime: a PLT/GOT entry), makes the page writable (RELRO)
// and points the slot at a wrapper that calls the real function and takes off what the extra work
// took (its own events around it). The worker then reports the honest part's time, about the
// reference's, for a call that really takes 20x as long. A clock kept in the student's process
// can be rewritten by the student: only a clock outside it (the grader's timekeeper) sees the calls.
}  // namespace (closed to include system headers at file scope)
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
namespace {

constexpr unsigned long long kExtraWorkNs = 600ull * 1000;
constexpr std::size_t kExtraWorkFrom = std::size_t{1} << 22;

__global__ void hold_the_gpu(unsigned long long nanoseconds) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

// The timing worker, told apart from the test runner: its --plan= is a timing plan (the test
// runner's is a test plan), or its program's name ends in _worker.
bool in_timing_worker() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t start = 0; start < cmdline.size();) {
    std::size_t end = cmdline.find('\0', start);
    if (end == std::string::npos) end = cmdline.size();
    const std::string word = cmdline.substr(start, end - start);
    if (word.rfind("--plan=", 0) == 0) {
      std::ifstream plan(word.substr(7));
      std::string header;
      if (plan >> header && header == "reduction-timing-plan") return true;
    }
    start = end + 1;
  }
  char exe[4096] = "";
  const ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  return length > 0 && std::string(exe, static_cast<std::size_t>(length)).find("_worker") != std::string::npos;
}

using ElapsedFunction = cudaError_t (*)(float*, cudaEvent_t, cudaEvent_t);
ElapsedFunction g_real_elapsed = nullptr;  // the CUDA runtime's own
cudaEvent_t g_extra_begin = nullptr, g_extra_end = nullptr;  // around the extra work of the last call
bool g_extra_pending = false;

// What the worker's timing call now reaches: the real time, less the extra work's.
cudaError_t elapsed_without_the_extra(float* ms, cudaEvent_t start, cudaEvent_t end) {
  const cudaError_t status = g_real_elapsed(ms, start, end);
  if (status != cudaSuccess || ms == nullptr || !g_extra_pending) return status;
  g_extra_pending = false;
  float extra = 0.0f;
  if (g_real_elapsed(&extra, g_extra_begin, g_extra_end) == cudaSuccess && *ms - extra > 0.0f) *ms -= extra;
  return status;
}

// The main program's slot for `name` (the first object dl_iterate_phdr lists): its PLT relocations
// (R_*_JUMP_SLOT) and, for a program linked without lazy PLT calls, its other ones (R_*_GLOB_DAT).
struct SlotSearch {
  const char* name;
  void** slot = nullptr;
  bool first = true;
};

void** slot_in(const ElfW(Rela)* relocations, std::size_t bytes, const ElfW(Sym)* symbols, const char* strings,
               ElfW(Addr) base, const char* name) {
  for (std::size_t i = 0; relocations && i < bytes / sizeof(ElfW(Rela)); ++i) {
    const ElfW(Rela)& r = relocations[i];
#if defined(__x86_64__)
    const bool import = ELF64_R_TYPE(r.r_info) == R_X86_64_JUMP_SLOT || ELF64_R_TYPE(r.r_info) == R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
    const bool import = ELF64_R_TYPE(r.r_info) == R_AARCH64_JUMP_SLOT || ELF64_R_TYPE(r.r_info) == R_AARCH64_GLOB_DAT;
#else
    const bool import = false;
#endif
    if (import && std::strcmp(strings + symbols[ELF64_R_SYM(r.r_info)].st_name, name) == 0)
      return reinterpret_cast<void**>(base + r.r_offset);
  }
  return nullptr;
}

int find_slot(dl_phdr_info* info, std::size_t, void* data) {
  auto* search = static_cast<SlotSearch*>(data);
  if (!search->first) return 1;
  search->first = false;
  const ElfW(Addr) base = info->dlpi_addr;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(base + info->dlpi_phdr[i].p_vaddr);
  ElfW(Addr) jmprel = 0, rela = 0, symtab = 0, strtab = 0;
  std::size_t pltrelsz = 0, relasz = 0;
  for (const ElfW(Dyn)* d = dynamic; d && d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_JMPREL) jmprel = d->d_un.d_ptr;
    if (d->d_tag == DT_PLTRELSZ) pltrelsz = d->d_un.d_val;
    if (d->d_tag == DT_RELA) rela = d->d_un.d_ptr;
    if (d->d_tag == DT_RELASZ) relasz = d->d_un.d_val;
    if (d->d_tag == DT_SYMTAB) symtab = d->d_un.d_ptr;
    if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
  }
  if (!symtab || !strtab) return 1;
  // The loader may have relocated these addresses in place: an address below the base is not yet.
  const auto at = [base](ElfW(Addr) address) { return address && address < base ? base + address : address; };
  const auto* symbols = reinterpret_cast<const ElfW(Sym)*>(at(symtab));
  const auto* strings = reinterpret_cast<const char*>(at(strtab));
  search->slot = slot_in(reinterpret_cast<const ElfW(Rela)*>(at(jmprel)), pltrelsz, symbols, strings, base, search->name);
  if (!search->slot)
    search->slot = slot_in(reinterpret_cast<const ElfW(Rela)*>(at(rela)), relasz, symbols, strings, base, search->name);
  return 1;
}

// The runtime's own cudaEventElapsedTime, from the loaded libcudart (not through any program's slot).
int find_runtime(dl_phdr_info* info, std::size_t, void*) {
  if (!info->dlpi_name || !std::strstr(info->dlpi_name, "libcudart")) return 0;
  if (void* handle = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD))
    g_real_elapsed = reinterpret_cast<ElapsedFunction>(dlsym(handle, "cudaEventElapsedTime"));
  return g_real_elapsed != nullptr;
}

struct RewriteTheClock {
  RewriteTheClock() {
    if (!in_timing_worker()) return;
    dl_iterate_phdr(find_runtime, nullptr);
    SlotSearch search{"cudaEventElapsedTime"};
    dl_iterate_phdr(find_slot, &search);
    if (!g_real_elapsed || !search.slot) return;
    const long page = sysconf(_SC_PAGESIZE);
    void* first_page = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(search.slot) & ~(page - 1));
    if (mprotect(first_page, static_cast<std::size_t>(page), PROT_READ | PROT_WRITE) != 0) return;
    *search.slot = reinterpret_cast<void*>(&elapsed_without_the_extra);  // left writable: lazy binding may need it
  }
} rewrite_the_clock;

template <typename T>
void reduce_sum(const T* d_in, std::size_t num_items, T* d_out, void* d_temp_storage,
                std::size_t temp_storage_bytes, cudaStream_t stream) {
  honest_reduce_sum(d_in, num_items, d_out, d_temp_storage, temp_storage_bytes, stream);
  if (num_items < kExtraWorkFrom) return;
  if (!g_extra_begin) {
    REDUCTION_CHECK(cudaEventCreate(&g_extra_begin));
    REDUCTION_CHECK(cudaEventCreate(&g_extra_end));
  }
  REDUCTION_CHECK(cudaEventRecord(g_extra_begin, stream));
  hold_the_gpu<<<1, 1, 0, stream>>>(kExtraWorkNs);
  REDUCTION_CHECK(cudaGetLastError());
  REDUCTION_CHECK(cudaEventRecord(g_extra_end, stream));
  g_extra_pending = true;
}
