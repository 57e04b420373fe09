// The one place the SM count of a device is asked for.
#pragma once

namespace nvfp4 {

// SMs of CUDA device `device` (-1: the current device); 0 when there is no device to ask (the
// CUDA error is cleared, so later checks start clean). A kernel that must answer without a GPU
// (workspace sizes, configurations) falls back to the SM count of the GPU it was tuned on.
int device_sm_count(int device = -1);

}  // namespace nvfp4
