#include "app/run_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "core/error.hpp"
#include "core/host_memory.hpp"
#include "core/parallel.hpp"
#include "device/cuda_check.hpp"
#include "reference/cpu_exact.hpp"
#include "report/json_report.hpp"
#include "report/npy.hpp"

namespace nvfp4 {

Context Context::create(int device_ordinal) {
  Context c;
  c.dev = query_device(device_ordinal);
  if (c.dev.has_gpu) {
    NVFP4_CUDA_CHECK(cudaSetDevice(device_ordinal));
    c.stream = std::make_unique<Stream>();
    c.flusher = std::make_unique<L2Flusher>(c.dev.l2_bytes);
  }
  return c;
}

namespace {

const char* role_word(Role r) {
  return r == Role::Kernel ? "kernel" : r == Role::Reference ? "reference" : "peer";
}

// Implementations that fit this backend: device ones with a GPU, host ones without. A host
// reference also serves a GPU run (run_case copies the inputs back); a host kernel does not:
// the GPU path hands kernels device pointers.
bool fits_backend(const Gemm& g, const Context& ctx) {
  if (!ctx.gpu()) return g.space() == Space::Host;
  return g.space() == Space::Device || g.role() != Role::Kernel;
}

std::string list_names(Role role) {
  std::string out = "auto";
  for (const auto& n : names_of(role)) out += ", " + n;
  return out;
}

}  // namespace

std::unique_ptr<Gemm> resolve(const std::string& field, const std::string& name, Role role,
                              const Shape& shape, const Context& ctx) {
  const std::string where =
      ctx.gpu() ? fmt::format("GPU '{}' (compute capability {})", ctx.dev.name, ctx.dev.cc_string())
                : std::string("this machine (no CUDA device)");
  if (name == "auto") {
    std::unique_ptr<Gemm> best;
    std::string why_not;
    for (const auto& e : registry()) {
      if (e.role != role) continue;
      auto g = e.make();
      const Availability a = g->availability(ctx.dev);
      if (!a.ok || !fits_backend(*g, ctx)) continue;
      if (const std::string se = g->shape_error(shape); !se.empty()) {
        why_not += fmt::format(" {}: {};", g->name(), se);
        continue;
      }
      if (!best || g->auto_rank() > best->auto_rank()) best = std::move(g);
    }
    if (!best)
      throw usage_error(fmt::format("{} auto: no {} can run {}x{}x{} L={} on {}:{}", field,
                                    role_word(role), shape.m, shape.n, shape.k, shape.l, where,
                                    why_not));
    return best;
  }
  auto g = make_gemm(name, role);
  if (!g)
    throw usage_error(fmt::format("{} '{}': unknown {}; expected one of: {}", field, name,
                                  role_word(role), list_names(role)));
  const Availability a = g->availability(ctx.dev);
  if (!a.ok || !fits_backend(*g, ctx)) {
    std::string can;
    for (const auto& e : registry()) {
      if (e.role != role) continue;
      auto other = e.make();
      if (other->availability(ctx.dev).ok && fits_backend(*other, ctx))
        can += (can.empty() ? "" : ", ") + other->name();
    }
    throw usage_error(fmt::format("{} '{}' cannot run on {}: {}; {}s that can run here: {}", field,
                                  name, where,
                                  !a.ok ? a.reason
                                  : ctx.gpu() ? "a host kernel runs only on the host backend (no CUDA device)"
                                              : "needs a CUDA device",
                                  role_word(role), can.empty() ? "none" : can));
  }
  if (const std::string se = g->shape_error(shape); !se.empty())
    throw usage_error(fmt::format("{} '{}' does not support {}x{}x{} L={}: {}", field, name,
                                  shape.m, shape.n, shape.k, shape.l, se));
  return g;
}

namespace {

void save_tensors(const std::string& dir, const CaseSpec& spec, const HostTensors& h,
                  const std::vector<uint16_t>& c, const std::vector<uint16_t>* ref,
                  const std::string& kernel, const std::string& reference) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw usage_error(fmt::format("--save-tensors {}: cannot create ({})", dir, ec.message()));
  const Shape& s = spec.problem.shape;
  const int64_t kbs = s.k / kBlockSize;
  write_npy(dir + "/a.npy", NpyType::U8, {s.l, s.m, s.k / 2}, h.a.data(), h.a.size());
  write_npy(dir + "/b.npy", NpyType::U8, {s.l, s.n, s.k / 2}, h.b.data(), h.b.size());
  write_npy(dir + "/sfa.npy", NpyType::U8, {s.l, s.m, kbs}, h.sfa.data(), h.sfa.size());
  write_npy(dir + "/sfb.npy", NpyType::U8, {s.l, s.n, kbs}, h.sfb.data(), h.sfb.size());
  write_npy(dir + "/sfa_blocked.npy", NpyType::U8, {s.l, int64_t(h.sfa_blocked.size()) / s.l},
            h.sfa_blocked.data(), h.sfa_blocked.size());
  write_npy(dir + "/sfb_blocked.npy", NpyType::U8, {s.l, int64_t(h.sfb_blocked.size()) / s.l},
            h.sfb_blocked.data(), h.sfb_blocked.size());
  write_npy(dir + "/c.npy", NpyType::F16, {s.l, s.m, s.n}, c.data(), c.size() * 2);
  if (ref) write_npy(dir + "/ref.npy", NpyType::F16, {s.l, s.m, s.n}, ref->data(), ref->size() * 2);
  const nlohmann::json pj = {{"m", s.m}, {"n", s.n}, {"k", s.k}, {"l", s.l},
                             {"seed", spec.problem.seed}, {"dist", dist_name(spec.problem.dist)},
                             {"kernel", kernel}, {"reference", reference},
                             {"ref_npy", ref ? "full reference output" : "absent: sampled verification"}};
  write_text_file_atomic(dir + "/problem.json", pj.dump(2) + "\n");
}

}  // namespace

CaseResult run_case(const CaseSpec& spec, Context& ctx) {
  const Shape& s = spec.problem.shape;
  validate_shape(s);
  CaseResult r;
  r.problem = spec.problem;
  r.tolerance = spec.tolerance;
  r.bytes = TensorBytes::of(s);

  auto kernel = resolve("--kernel", spec.kernel, Role::Kernel, s, ctx);
  auto reference = resolve("--reference", spec.reference, Role::Reference, s, ctx);
  r.kernel = kernel->name();
  r.kernel_description = kernel->description();
  r.reference = reference->name();
  r.reference_description = reference->description();
  const int64_t c_elems = s.l * s.m * s.n;

  // Sampled or full: a full CPU check of a huge problem would take minutes.
  int64_t sample = spec.verify_sample;
  if (sample == 0 && reference->space() == Space::Host &&
      double(s.m) * double(s.n) * double(s.k) * double(s.l) > kAutoSampleMacs) {
    sample = kAutoSampleCount;
    r.notes.push_back(fmt::format("full CPU check too large: sampled {} elements", sample));
  }
  sample = std::min(sample, c_elems);
  const bool need_host_inputs = !ctx.gpu() || reference->space() == Space::Host ||
                                !spec.save_tensors_dir.empty();

  // Refused up front, with the sizes: an overcommitted allocation would not fail cleanly.
  const std::string shape_text = fmt::format("{}x{}x{} L={}", s.m, s.n, s.k, s.l);
  require_host_memory((need_host_inputs || !ctx.gpu() ? r.bytes.total() : 0) + 2 * r.bytes.c +
                          (ctx.gpu() ? 0 : int64_t(kernel->workspace_bytes(s))),
                      shape_text);
  if (ctx.gpu()) {
    size_t free_bytes = 0, total_bytes = 0;
    NVFP4_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const int64_t need = r.bytes.total() + (reference->space() == Space::Device ? r.bytes.c : 0) +
                         int64_t(kernel->workspace_bytes(s)) + int64_t(reference->workspace_bytes(s));
    if (need > int64_t(free_bytes))
      throw runtime_error(fmt::format("out of device memory: {} needs {} on the GPU, {} free of {}",
                                      shape_text, byte_text(double(need)), byte_text(double(free_bytes)),
                                      byte_text(double(total_bytes))));
  }

  HostTensors host;
  if (need_host_inputs || !ctx.gpu()) host.allocate(s);
  std::vector<uint16_t> kernel_out(static_cast<size_t>(c_elems));
  std::vector<uint16_t> ref_out;
  std::vector<Coord> coords;
  if (sample > 0) coords = sample_coords(s, sample, spec.problem.seed ^ 0x5eedull);

  if (ctx.gpu()) {
    cudaStream_t st = ctx.stream->get();
    DeviceTensors dev;
    dev.allocate(s);
    generate_device(spec.problem, dev, st);
    ctx.stream->sync();
    if (need_host_inputs) copy_inputs_to_host(dev, host);

    // Kernel: poisoned output, one checked run, then the result back to the host.
    Operands kops = dev.view();
    DeviceBuffer kws(kernel->workspace_bytes(s));
    kernel->prepare(s, kops, st);
    poison_device(kops.c, c_elems, st);
    kernel->run(s, kops, kws.get(), st);
    ctx.stream->sync();
    NVFP4_CUDA_CHECK(cudaMemcpy(kernel_out.data(), kops.c, size_t(c_elems) * 2, cudaMemcpyDeviceToHost));

    // Reference into its own poisoned buffer.
    if (reference->space() == Space::Device) {
      DeviceBuffer ref_c(size_t(c_elems) * 2);
      Operands rops = dev.view();
      rops.c = ref_c.get<uint16_t>();
      DeviceBuffer rws(reference->workspace_bytes(s));
      reference->prepare(s, rops, st);
      poison_device(rops.c, c_elems, st);
      reference->run(s, rops, rws.get(), st);
      ctx.stream->sync();
      ref_out.resize(size_t(c_elems));
      NVFP4_CUDA_CHECK(cudaMemcpy(ref_out.data(), rops.c, size_t(c_elems) * 2, cudaMemcpyDeviceToHost));
      if (spec.time_reference) {
        auto m = measure_device([&](cudaStream_t q) { reference->run(s, rops, rws.get(), q); },
                                spec.measure, st, ctx.flusher.get());
        r.reference_timing = make_timing(reference->name(), "reference", std::move(m), s, r.bytes);
      }
    }

    auto m = measure_device([&](cudaStream_t q) { kernel->run(s, kops, kws.get(), q); },
                            spec.measure, st, ctx.flusher.get());
    r.kernel_timing = make_timing(kernel->name(), "kernel", std::move(m), s, r.bytes);
  } else {
    generate_host(spec.problem, host);
    Operands kops = host.view();
    kops.c = kernel_out.data();
    poison_host(kops.c, c_elems);
    std::vector<uint8_t> kws(kernel->workspace_bytes(s));
    kernel->prepare(s, kops, nullptr);
    kernel->run(s, kops, kws.data(), nullptr);
    MeasureOptions mo = spec.measure;
    auto m = measure_host([&] { kernel->run(s, kops, kws.data(), nullptr); }, mo);
    r.kernel_timing = make_timing(kernel->name(), "kernel", std::move(m), s, r.bytes);
  }

  // The CPU reference (full or at the sampled coordinates), timed once.
  if (reference->space() == Space::Host) {
    Operands hops = host.view();
    if (sample > 0) {
      ref_out.assign(size_t(c_elems), kPoisonFp16);
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<uint16_t> vals(coords.size());
      parallel_for(int64_t(coords.size()), [&](int64_t t) {
        const Coord& c = coords[size_t(t)];
        vals[size_t(t)] = exact_element_fp16(s, hops, c.batch, c.i, c.j);
      });
      for (size_t t = 0; t < coords.size(); ++t) {
        const Coord& c = coords[t];
        ref_out[size_t((c.batch * s.m + c.i) * s.n + c.j)] = vals[t];
      }
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      r.notes.push_back(fmt::format("cpu reference: {} sampled elements in {:.3f} s", coords.size(), us * 1e-6));
    } else {
      ref_out.assign(size_t(c_elems), kPoisonFp16);
      hops.c = ref_out.data();
      Measurement m = measure_host([&] { reference->run(s, hops, nullptr, nullptr); }, {0, 1, false});
      r.reference_timing = make_timing(reference->name(), "reference", std::move(m), s, r.bytes);
    }
  }

  // Verify: a reference that left outputs unwritten is an error of the reference, not the kernel.
  if (sample > 0) {
    Verifier v(spec.tolerance, "sampled");
    for (const Coord& c : coords) {
      const int64_t idx = (c.batch * s.m + c.i) * s.n + c.j;
      v.check(c, kernel_out[size_t(idx)], ref_out[size_t(idx)]);
    }
    r.verification = v.result();
  } else {
    const int64_t ref_unwritten = std::count(ref_out.begin(), ref_out.end(), kPoisonFp16);
    if (ref_unwritten > 0) {
      r.disposition = Disposition::Error;
      r.message = fmt::format("reference '{}' left {} of {} outputs unwritten", r.reference,
                              ref_unwritten, c_elems);
      return r;
    }
    r.verification = verify_full(s, kernel_out.data(), ref_out.data(), spec.tolerance);
  }
  const VerifyResult& v = *r.verification;
  if (v.passed()) {
    r.disposition = Disposition::Passed;
  } else {
    r.disposition = Disposition::Incorrect;
    r.message = fmt::format("{} of {} checked elements mismatch ({} unwritten)", v.mismatches,
                            v.checked, v.unwritten);
  }

  if (!spec.save_tensors_dir.empty())
    save_tensors(spec.save_tensors_dir, spec, host, kernel_out, sample > 0 ? nullptr : &ref_out,
                 r.kernel, r.reference);
  return r;
}

}  // namespace nvfp4
