// --kernel-py: GPU MODE nvfp4_gemm submissions in an embedded CPython (pybind11). They get the
// contest's input tuple as zero-copy views of the tool's own buffers in the contest's shapes and
// strides: numpy arrays on the host backend, torch CUDA tensors on the GPU backend, where the call
// runs on the tool's stream (docs/python.md).
#include "src/python/python_kernels.hpp"

#include <fmt/format.h>
#include <pybind11/embed.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <tuple>

#include <cuda_runtime_api.h>

#include "src/core/error.hpp"
#include "src/core/guard.hpp"
#include "src/device/cuda_check.hpp"
#include "src/device/device_info.hpp"
#include "src/format/nvfp4.hpp"
#include "src/python/contest_tuple.hpp"
#include "src/python/kernel_helper_py.hpp"  // generated (cmake/EmbedText.cmake)
#include "src/python/python_exit.hpp"
#include "src/registry/registry.hpp"

namespace py = pybind11;

namespace nvfp4 {
namespace {  // internal linkage: classes holding pybind11 objects stay out of the symbol table

constexpr const char* kDefaultFunction = "custom_kernel";

// The interpreter, started on the first --kernel-py and never finalized: kernels stay callable
// until exit. The GIL is released between calls; every entry point takes it.
py::object& helper() {
  static py::object* h = nullptr;  // leaked on purpose, like the interpreter
  if (!h) {
    // The interpreter the tool was built against, as if started from its executable: inside a
    // virtual environment (the one that holds torch, say) that makes its site-packages the ones
    // imported.
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    config.isolated = 0;
    config.use_environment = 1;
    config.install_signal_handlers = 0;
    const PyStatus st = PyConfig_SetBytesString(&config, &config.executable, NVFP4_PYTHON_EXECUTABLE);
    if (PyStatus_Exception(st)) {
      PyConfig_Clear(&config);
      throw runtime_error(fmt::format("cannot start the embedded Python {}", NVFP4_PYTHON_EXECUTABLE));
    }
    py::initialize_interpreter(&config, 0, nullptr, /*add_program_dir_to_path=*/false);
    {
      py::object m = py::module_::import("types").attr("ModuleType")("_nvfp4bench_python");
      py::exec(kKernelHelperPy, m.attr("__dict__"));  // src/python/kernel_helper.py
      h = new py::object(std::move(m));
    }
    PyEval_SaveThread();
  }
  return *h;
}

struct Spec {
  std::string file, function;
};

Spec split_spec(const std::string& spec) {
  const size_t colon = spec.rfind(':');
  if (colon != std::string::npos) {
    const std::string tail = spec.substr(colon + 1);
    const bool identifier =
        !tail.empty() && !std::isdigit(static_cast<unsigned char>(tail[0])) &&
        std::all_of(tail.begin(), tail.end(),
                    [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (identifier) return {spec.substr(0, colon), tail};
  }
  return {spec, kDefaultFunction};
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return s;
}

struct Loaded {
  std::string path, function, name;
  PyObject* fn = nullptr;  // a strong reference, never released (the interpreter outlives all)
};

std::vector<std::shared_ptr<Loaded>>& loaded() {
  static std::vector<std::shared_ptr<Loaded>> all;
  return all;
}

// A read-only (or, for c, writable) numpy view of the tool's memory: no copy, and a base object
// that frees nothing.
py::array view(const py::dtype& dt, std::vector<py::ssize_t> shape,
               std::vector<py::ssize_t> strides, const void* p, bool writable) {
  py::capsule base(p, "nvfp4bench buffer");
  py::array a(dt, std::move(shape), std::move(strides), p, base);
  if (!writable) a.attr("setflags")(py::arg("write") = false);
  return a;
}

// Whether the GPU backend will run: the same question Context::create asks (a CUDA device is
// visible), asked once.
bool gpu_backend() {
  static const bool gpu = [] {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  }();
  return gpu;
}

// Why the embedded Python cannot hand CUDA tensors ('' when it can), asked once: importing torch
// takes seconds.
const std::string& torch_problem() {
  static const std::string why = [] {
    py::object& h = helper();  // starts the interpreter first if need be: then the GIL exists
    py::gil_scoped_acquire gil;
    const std::string s = py::str(h.attr("torch_status")()).cast<std::string>();
    if (s.empty()) return s;
    const py::module_ sys = py::module_::import("sys");
    return fmt::format("the GPU backend hands submissions torch CUDA tensors, but the embedded "
                       "Python {} ({}) {}; build against a Python with torch "
                       "(-DNVFP4_PYTHON=/path/to/python3) or run on the host backend "
                       "(CUDA_VISIBLE_DEVICES=)",
                       py::str(sys.attr("version")).cast<std::string>().substr(0, 6),
                       NVFP4_PYTHON_EXECUTABLE, s);
  }();
  return why;
}

class PythonGemm final : public Gemm {
 public:
  explicit PythonGemm(std::shared_ptr<const Loaded> k) : k_(std::move(k)) {}
  ~PythonGemm() override {
    if (cache_.empty()) return;
    if (guard::tainted()) {  // the interpreter may be broken: leak the views, touch nothing
      for (auto& kv : cache_) (void)kv.second.release();
      return;
    }
    py::gil_scoped_acquire gil;
    cache_.clear();
  }

  std::string name() const override { return k_->name; }
  std::string description() const override {
    // On the GPU the stream is held while the call enqueues (src/measure/stream_hold.hpp): the
    // Python call is in the host time per call, not in the GPU window.
    return fmt::format("{}() in {} [Python; {}]", k_->function, k_->path,
                       gpu_backend() ? "torch CUDA tensors on the tool's stream; the Python call "
                                       "is in the host time per call"
                                     : "host backend: numpy views; times include the Python call");
  }
  Space space() const override { return gpu_backend() ? Space::Device : Space::Host; }
  int auto_rank() const override { return -1; }  // never picked by --kernel auto
  Availability availability(const DeviceInfo& dev) const override {
    if (dev.has_gpu && !torch_problem().empty()) return {false, torch_problem()};
    return {true, {}};
  }

  void run(const Shape& s, const Operands& o, void*, cudaStream_t stream) override {
    const bool gpu = space() == Space::Device;
    int device = 0;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (gpu) {
      NVFP4_CUDA_CHECK(cudaGetDevice(&device));
      NVFP4_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
    }
    // Guarded (guard.hpp): an exit, a crash or the run's timeout inside the call is reported.
    guard::call(who_run_, [&] { call(s, o, gpu, device, capture, stream); });
  }

 private:
  void call(const Shape& s, const Operands& o, bool gpu, int device,
            cudaStreamCaptureStatus capture, cudaStream_t stream) {
    py::gil_scoped_acquire gil;
    try {
      const py::tuple& data = inputs(s, o, gpu, device);
      if (gpu)
        helper().attr("call_cuda")(py::handle(k_->fn), data, data[6],
                                   reinterpret_cast<uintptr_t>(stream), device);
      else
        helper().attr("call")(py::handle(k_->fn), data, data[6]);
    } catch (py::error_already_set& e) {
      if (const std::string exit = python_exit_text(e.value()); !exit.empty())
        throw runtime_error(fmt::format("kernel '{}' ({} in {}) {}: a kernel may not end the "
                                        "tool's run", k_->name, k_->function, k_->path, exit));
      std::string why;
      bool unsupported = false;
      try {
        why = py::str(helper().attr("describe_call")(e.value(), k_->path, py::handle(k_->fn)))
                  .cast<std::string>();
        unsupported = helper().attr("unsupported")(e.value()).cast<bool>();
      } catch (const std::exception&) {
        why = e.what();
      }
      const std::string what = fmt::format("{} {}", k_->function, one_line(why));
      if (capture != cudaStreamCaptureStatusNone)
        throw runtime_error(fmt::format("kernel '{}' cannot be captured in a CUDA graph (--mode "
                                        "graph; the other modes run it): {}", k_->name, what));
      if (unsupported)
        throw usage_error(fmt::format("kernel '{}': not supported on this {}: {}", k_->name,
                                      gpu ? "GPU" : "machine", what));
      throw runtime_error(fmt::format("kernel '{}': {}", k_->name, what));
    }
  }

  // GPU MODE's tuple over the tool's buffers, as numpy views (host) or torch CUDA tensors
  // (GPU); kept per operand set, so a repeated call builds nothing.
  const py::tuple& inputs(const Shape& s, const Operands& o, bool gpu, int device) {
    const auto key = std::make_tuple(o.a, o.b, o.sfa, o.sfb, o.sfa_blocked, o.sfb_blocked, o.c,
                                     s.m, s.n, s.k, s.l);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    if (cache_.size() >= 64) cache_.clear();
    py::list views;
    for (const TupleView& v : contest_tuple(s, o)) {
      if (gpu) {
        views.append(py::make_tuple(reinterpret_cast<uintptr_t>(v.p), v.shape, v.strides,
                                    kind_name(v.kind)));
        continue;
      }
      const bool f16 = v.kind == TupleKind::F16;  // c: the only writable element
      std::vector<py::ssize_t> bytes(v.strides.begin(), v.strides.end());
      for (auto& b : bytes) b *= f16 ? 2 : 1;
      views.append(view(f16 ? py::dtype("float16") : py::dtype::of<uint8_t>(),
                        std::vector<py::ssize_t>(v.shape.begin(), v.shape.end()), std::move(bytes),
                        v.p, f16));
    }
    py::tuple t = gpu ? py::tuple(helper().attr("cuda_tensors")(views, device)) : py::tuple(views);
    return cache_.emplace(key, std::move(t)).first->second;
  }

  std::shared_ptr<const Loaded> k_;
  std::string who_run_ = fmt::format("kernel '{}' ({} in {})", k_->name, k_->function, k_->path);
  std::map<std::tuple<const void*, const void*, const void*, const void*, const void*,
                      const void*, const void*, int64_t, int64_t, int64_t, int64_t>,
           py::tuple>
      cache_;
};

bool valid_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                  c == '+' || c == ':' || c == '-';
         });
}

}  // namespace

bool python_kernels_built() { return true; }

std::string load_python_kernel(const std::string& arg) {
  namespace fs = std::filesystem;
  const Spec sp = split_spec(arg);
  const auto bad = [&](const std::string& what) {
    return usage_error(fmt::format("--kernel-py {} (function {}): {}", sp.file, sp.function,
                                   one_line(what)));
  };
  std::error_code ec;
  if (!fs::exists(sp.file, ec)) throw bad(ec ? "cannot be read (" + ec.message() + ")" : "no such file");
  if (!fs::is_regular_file(sp.file, ec)) throw bad("not a regular file");
  const std::string abs = fs::weakly_canonical(fs::absolute(sp.file, ec), ec).string();
  for (const auto& l : loaded())
    if (l->path == abs && l->function == sp.function) return l->name;
  std::string name = "py:" + fs::path(abs).stem().string();
  if (sp.function != kDefaultFunction) name += ":" + sp.function;
  if (!valid_name(name))
    throw bad(fmt::format("kernel name '{}': must be 1 to 64 characters from [A-Za-z0-9._+:-]; "
                          "rename the file", name));
  if (gemm_name_taken(name))
    throw bad(fmt::format("kernel name '{}' is already taken (built-in or loaded before); rename "
                          "the file", name));

  auto k = std::make_shared<Loaded>();
  k->path = abs;
  k->function = sp.function;
  k->name = name;
  py::object& h = helper();
  // Importing runs the submission's top level: guarded like its calls (guard.hpp), the GIL
  // taken inside, so that a jump out of a crashed import leaves the interpreter alone.
  guard::call(fmt::format("--kernel-py {} (while importing it)", sp.file), [&] {
    py::gil_scoped_acquire gil;
    try {
      (void)py::module_::import("numpy");
    } catch (py::error_already_set& e) {
      const py::module_ sys = py::module_::import("sys");
      throw bad(fmt::format("the embedded Python {} cannot import numpy ({}): install "
                            "python3-numpy", py::str(sys.attr("version")).cast<std::string>(),
                            e.what()));
    }
    install_python_exit_hooks();
    py::object module;
    try {
      module = h.attr("load")(abs);
    } catch (py::error_already_set& e) {
      if (const std::string exit = python_exit_text(e.value()); !exit.empty())
        throw runtime_error(fmt::format("--kernel-py {}: {} while being imported: a kernel may "
                                        "not end the tool's run", sp.file, exit));
      throw bad("the file does not load: " + py::str(h.attr("describe")(e.value(), abs)).cast<std::string>());
    }
    try {
      k->fn = h.attr("function")(module, sp.function).release().ptr();
    } catch (py::error_already_set& e) {
      throw bad("the file " + py::str(e.value()).cast<std::string>());
    }
  });
  std::shared_ptr<const Loaded> ck = k;
  if (!register_gemm({name, Role::Kernel, [ck]() -> std::unique_ptr<Gemm> {
                        return std::make_unique<PythonGemm>(ck);
                      }}))
    throw bad(fmt::format("kernel name '{}' is already taken", name));
  loaded().push_back(k);
  return name;
}

std::vector<std::string> loaded_python_kernels() {
  std::vector<std::string> out;
  for (const auto& l : loaded()) out.push_back(l->path + ":" + l->function);
  return out;
}

}  // namespace nvfp4
