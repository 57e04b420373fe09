// Planted for check_sm90_ptxas.cmake: an array written and read at run-time indices cannot live in
// registers, so it takes a stack frame in local memory, which the check must refuse.
__global__ void local_memory_kernel(float* out, const int* idx) {
  float a[256];
  for (int j = 0; j < 256; ++j) a[idx[j] & 255] = out[j];
  out[0] = a[idx[256] & 255];
}
