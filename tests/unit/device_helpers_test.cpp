// The one SM-count source, the one tensor-map encoder and the one CUDA-graph capture
// (src/device/), and the per-device state the sm90 kernel keeps with them. Without a GPU: no SM count, the encoder refuses with
// the tool's runtime error, sm90 assumes an H200's 132 SMs; with one: the real values.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "kernels/sm90/launch.hpp"
#include "src/core/error.hpp"
#include "src/device/device_info.hpp"
#include "src/device/graph.hpp"
#include "src/device/sm_count.hpp"
#include "src/device/tensor_map.hpp"

using namespace nvfp4;

TEST(DeviceHelpers, SmCountIsTheDevicesOrNone) {
  const DeviceInfo d = query_device(0);
  EXPECT_EQ(device_sm_count(0), d.has_gpu ? d.sm_count : 0);
  EXPECT_EQ(device_sm_count(), d.has_gpu ? d.sm_count : 0);  // the current device (0)
  EXPECT_EQ(device_sm_count(4096), 0);                         // no such device
  // and no error left behind (without a driver the runtime reports its missing init every time)
  if (d.has_gpu) {
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
}

TEST(DeviceHelpers, Sm90KeepsStatePerDevice) {
  const DeviceInfo d = query_device(0);
  sm90::PerDevice devices;
  sm90::DeviceState& s = devices.current();
  EXPECT_EQ(s.device(), d.has_gpu ? 0 : -1);
  EXPECT_EQ(s.sm_count(), d.has_gpu ? d.sm_count : sm90::kDefaultSmCount);
  EXPECT_EQ(&devices.current(), &s);  // one state per device, kept
}

TEST(DeviceHelpers, TensorMapEncoderNamesTheMapOnFailure) {
  TensorMapSpec bad;  // rank 0: the driver refuses it
  void* base = nullptr;
  const DeviceInfo d = query_device(0);
  if (d.has_gpu) {
    ASSERT_EQ(cudaMalloc(&base, 4096), cudaSuccess);
  }
  try {
    (void)encode_tensor_map(bad, base, "planted map");
    ADD_FAILURE() << "an invalid map was encoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitRuntime);
    if (d.has_gpu) {
      EXPECT_NE(std::string(e.what()).find("cuTensorMapEncodeTiled(planted map) failed"), std::string::npos)
          << e.what();
    }
  }
  if (!d.has_gpu) return;
  TensorMapSpec ok;  // [1, 32, 64] fp16, one 64 x 32 box, 128-byte swizzle
  ok.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  ok.rank = 3;
  ok.dims[0] = 64;
  ok.dims[1] = 32;
  ok.dims[2] = 1;
  ok.strides_bytes[0] = 128;
  ok.strides_bytes[1] = 4096;
  ok.box[0] = 64;
  ok.box[1] = 32;
  ok.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  EXPECT_NO_THROW((void)encode_tensor_map(ok, base, "fp16 tile"));
  (void)cudaFree(base);
}

// GraphExec::capture ends the capture when the work throws (the exception goes on, the stream is
// left capturing nothing), names the caller where the runtime ends the capture with an error,
// and replays what it captured. Without a GPU the capture cannot begin: a CUDA error, no graph.
TEST(DeviceHelpers, GraphCaptureEndsWhateverTheWorkDoes) {
  const DeviceInfo d = query_device(0);
  GraphExec g;
  if (!d.has_gpu) {
    EXPECT_THROW(g.capture(nullptr, [] {}), Error);
    EXPECT_TRUE(g.empty());
    return;
  }
  cudaStream_t st = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  EXPECT_THROW(g.capture(st, [] { throw std::logic_error("planted"); }), std::logic_error);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
  ASSERT_EQ(cudaStreamIsCapturing(st, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  EXPECT_TRUE(g.empty());
  // a synchronisation inside the capture invalidates it: the runtime ends it with an error
  try {
    g.capture(st, [&] { (void)cudaStreamSynchronize(st); }, "--mode graph");
    ADD_FAILURE() << "an invalidated capture was instantiated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--mode graph: the work cannot be captured in a CUDA graph ("),
              std::string::npos)
        << e.what();
  }
  ASSERT_EQ(cudaStreamIsCapturing(st, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  void* buf = nullptr;
  ASSERT_EQ(cudaMalloc(&buf, 256), cudaSuccess);
  g.capture(st, [&] { ASSERT_EQ(cudaMemsetAsync(buf, 7, 256, st), cudaSuccess); });
  EXPECT_FALSE(g.empty());
  g.launch(st);
  ASSERT_EQ(cudaStreamSynchronize(st), cudaSuccess);
  unsigned char host[256];
  ASSERT_EQ(cudaMemcpy(host, buf, 256, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(host[0], 7);
  EXPECT_EQ(host[255], 7);
  EXPECT_EQ(cudaFree(buf), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(st), cudaSuccess);
}
