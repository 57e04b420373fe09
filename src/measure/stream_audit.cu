#include "src/measure/stream_audit.hpp"

#include <cupti_activity.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "src/core/error.hpp"
#include "src/device/cublaslt_library.hpp"
#include "src/device/cuda_check.hpp"

namespace nvfp4 {

namespace {

// Empty kernels whose activity records mark a window on the tool's stream: the open mark ends
// before the start event, the close mark starts after the stop event.
__global__ void audit_open_mark() {}
__global__ void audit_close_mark() {}

using Rec = AuditRecord;
using Role = AuditRecord::Role;

constexpr size_t kBufferBytes = 8u << 20;

}  // namespace

// The CUPTI entry points used, from cupti_activity.h (types only: the library is dlopened).
struct StreamAudit::Api {
  CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*enable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*disable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*flush_all)(uint32_t) = nullptr;
  CUptiResult (*next_record)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*dropped)(CUcontext, uint32_t, size_t*) = nullptr;
  CUptiResult (*result_string)(CUptiResult, const char**) = nullptr;
};

// CUPTI's callbacks are plain functions, called from its own thread: one audit at a time.
struct StreamAudit::State {
  std::mutex mu;
  std::vector<Rec> recs;
  const Api* api = nullptr;
};

namespace {

StreamAudit::State g_state;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

std::string demangled(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : name;
  std::free(d);
  return out;
}

Rec work(uint32_t stream, uint64_t start, uint64_t end, std::string what) {
  Rec r;
  r.stream = stream;
  r.start = start;
  r.end = end;
  r.what = std::move(what);
  return r;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<Rec> got;
  CUpti_Activity* a = nullptr;
  while (g_state.api && g_state.api->next_record(buffer, valid, &a) == CUPTI_SUCCESS) {
    switch (a->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
        const char* name = k->name ? k->name : "?";
        Rec r = work(k->streamId, k->start, k->end, "");
        if (std::strstr(name, "audit_open_mark")) r.role = Role::Open;
        else if (std::strstr(name, "audit_close_mark")) r.role = Role::Close;
        else r.what = fmt::format("kernel {}", demangled(name));
        got.push_back(std::move(r));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(a);
        got.push_back(work(m->streamId, m->start, m->end, fmt::format("a copy of {} bytes", m->bytes)));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(a);
        got.push_back(work(m->streamId, m->start, m->end, fmt::format("a memset of {} bytes", m->bytes)));
        break;
      }
      default:
        break;
    }
  }
  std::free(buffer);
  std::lock_guard<std::mutex> lock(g_state.mu);
  for (Rec& r : got) g_state.recs.push_back(std::move(r));
}

constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

}  // namespace

std::unique_ptr<StreamAudit> StreamAudit::open() {
  std::string why;
  // The toolkit's major version names its CUPTI (libcupti.so.13 with CUDA 13).
  void* lib = lt::open_library(fmt::format("libcupti.so.{}", CUDART_VERSION / 1000), NVFP4_CUPTI_DIR, why);
  if (!lib)
    throw runtime_error(fmt::format("--audit-streams: CUPTI (part of the CUDA toolkit) could not be "
                                    "loaded: {}; add its folder to LD_LIBRARY_PATH", why));
  std::unique_ptr<StreamAudit> s(new StreamAudit());
  s->lib_ = lib;
  s->api_ = std::make_unique<Api>();
  Api& a = *s->api_;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (!fn) throw runtime_error(fmt::format("--audit-streams: CUPTI lacks {}", name));
  };
  sym(a.register_callbacks, "cuptiActivityRegisterCallbacks");
  sym(a.enable, "cuptiActivityEnable");
  sym(a.disable, "cuptiActivityDisable");
  sym(a.flush_all, "cuptiActivityFlushAll");
  sym(a.next_record, "cuptiActivityGetNextRecord");
  sym(a.dropped, "cuptiActivityGetNumDroppedRecords");
  sym(a.result_string, "cuptiGetResultString");
  g_state.api = &a;
  if (const CUptiResult r = a.register_callbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS) {
    const char* why = "?";
    a.result_string(r, &why);
    throw runtime_error(fmt::format("--audit-streams: CUPTI refused to record activity: {}", why));
  }
  return s;
}

StreamAudit::~StreamAudit() {
  if (api_) {
    for (CUpti_ActivityKind k : kKinds) api_->disable(k);
    api_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  g_state.api = nullptr;
  // The library stays loaded: CUPTI keeps its thread and callbacks for the process's lifetime.
}

void StreamAudit::begin() {
  {
    std::lock_guard<std::mutex> lock(g_state.mu);
    g_state.recs.clear();
  }
  for (CUpti_ActivityKind k : kKinds)
    if (const CUptiResult r = api_->enable(k); r != CUPTI_SUCCESS) {
      const char* why = "?";
      api_->result_string(r, &why);
      throw runtime_error(fmt::format("--audit-streams: CUPTI could not record activity kind {}: {}",
                                      int(k), why));
    }
}

void StreamAudit::open_window(cudaStream_t s) {
  audit_open_mark<<<1, 1, 0, s>>>();
  NVFP4_CUDA_CHECK_LAUNCH();
}

void StreamAudit::close_window(cudaStream_t s) {
  audit_close_mark<<<1, 1, 0, s>>>();
  NVFP4_CUDA_CHECK_LAUNCH();
}

AuditOutcome StreamAudit::end() {
  for (CUpti_ActivityKind k : kKinds) api_->disable(k);
  api_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::vector<Rec> recs;
  {
    std::lock_guard<std::mutex> lock(g_state.mu);
    recs.swap(g_state.recs);
  }
  AuditOutcome o;
  o.records = int64_t(recs.size());
  size_t dropped = 0;
  if (api_->dropped(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    o.failure = fmt::format("--audit-streams cannot decide: CUPTI dropped {} activity records", dropped);
    return o;
  }
  const AuditOutcome judged = judge_audit(std::move(recs));
  o.windows = judged.windows;
  o.outside = judged.outside;
  o.failure = judged.failure;
  return o;
}

}  // namespace nvfp4
