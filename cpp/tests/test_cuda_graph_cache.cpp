// The CUDA-graph cache's order of work, with the CUDA calls replaced by ones
// that write down what was called (so it runs without a GPU), and which
// memory a device engine may address as it is. On a GPU the same paths run
// for real in test_backend_gpu.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda/cuda_device.h"
#include "cuda/cuda_graph_cache.h"

namespace tte {
namespace {

std::vector<std::string>* g_calls = nullptr;
bool g_fail_end_capture = false;

void record(const std::string& call) { g_calls->push_back(call); }

cudaError_t fake_synchronize(cudaStream_t) {
  record("synchronize");
  return cudaSuccess;
}
cudaError_t fake_begin(cudaStream_t) {
  record("begin_capture");
  return cudaSuccess;
}
cudaError_t fake_end(cudaStream_t, cudaGraph_t* graph) {
  record("end_capture");
  *graph = reinterpret_cast<cudaGraph_t>(0x1);
  return g_fail_end_capture ? cudaErrorStreamCaptureInvalidated : cudaSuccess;
}
cudaError_t fake_instantiate(cudaGraphExec_t* exec, cudaGraph_t) {
  record("instantiate");
  *exec = reinterpret_cast<cudaGraphExec_t>(0x2);
  return cudaSuccess;
}
cudaError_t fake_launch(cudaGraphExec_t, cudaStream_t) {
  record("launch");
  return cudaSuccess;
}
void fake_destroy_graph(cudaGraph_t) {}
void fake_destroy_exec(cudaGraphExec_t) {}

const CudaGraphCalls kFakeCalls{&fake_synchronize,  &fake_begin,        &fake_end,
                                &fake_instantiate,  &fake_launch,       &fake_destroy_graph,
                                &fake_destroy_exec};

class GraphCache : public testing::Test {
 protected:
  void SetUp() override {
    g_calls = &calls_;
    g_fail_end_capture = false;
  }
  void TearDown() override { g_calls = nullptr; }

  Status run(CudaGraphCache& cache, std::vector<int64_t> signature, bool capturable = true) {
    return cache.run(
        signature, nullptr,
        [] {
          record("enqueue");
          return Status::Ok();
        },
        [capturable] {
          record("capturable?");
          return capturable;
        });
  }

  std::vector<std::string> calls_;
};

using Calls = std::vector<std::string>;

// trtexec (samples/common/sampleInference.cpp): a plain enqueue and a
// synchronize right before cudaStreamBeginCapture, because the first enqueue
// after a shape or profile change does work a capture cannot hold
// (NvInferRuntime.h:4272). The captured graph is not launched: the plain
// enqueue already did the call's work.
TEST_F(GraphCache, CapturesRightAfterAPlainEnqueueAndSynchronize) {
  CudaGraphCache cache(8, kFakeCalls);
  ASSERT_TRUE(run(cache, {1, 4}).ok());
  EXPECT_EQ(calls_, (Calls{"enqueue"})) << "the first sight of a signature runs plainly";
  calls_.clear();
  ASSERT_TRUE(run(cache, {1, 4}).ok());
  EXPECT_EQ(calls_, (Calls{"enqueue", "synchronize", "capturable?", "begin_capture", "enqueue",
                           "end_capture", "instantiate"}));
  EXPECT_EQ(cache.num_graphs(), 1u);
  calls_.clear();
  ASSERT_TRUE(run(cache, {1, 4}).ok());
  EXPECT_EQ(calls_, (Calls{"launch"}));
  EXPECT_EQ(cache.replays(), 1u);
}

// Other shapes in between: the capture of {1, 4} still follows its own
// plain enqueue, never another signature's.
TEST_F(GraphCache, AnotherSignatureInBetweenDoesNotBreakTheOrder) {
  CudaGraphCache cache(8, kFakeCalls);
  ASSERT_TRUE(run(cache, {1, 4}).ok());
  ASSERT_TRUE(run(cache, {2, 4}).ok());
  calls_.clear();
  ASSERT_TRUE(run(cache, {1, 4}).ok());
  ASSERT_GE(calls_.size(), 4u);
  EXPECT_EQ(calls_[0], "enqueue");
  EXPECT_EQ(calls_[1], "synchronize");
  EXPECT_EQ(calls_[3], "begin_capture");
}

TEST_F(GraphCache, AnEngineThatCannotBeCapturedRunsPlainly) {
  CudaGraphCache cache(8, kFakeCalls);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(run(cache, {3}, /*capturable=*/false).ok());
  EXPECT_EQ(cache.num_graphs(), 0u);
  int begins = 0, enqueues = 0;
  for (const std::string& call : calls_) {
    begins += call == "begin_capture";
    enqueues += call == "enqueue";
  }
  EXPECT_EQ(begins, 0);
  EXPECT_EQ(enqueues, 4) << "every call still ran once";
}

// A failed capture leaves that signature to plain enqueues; others may still
// be captured.
TEST_F(GraphCache, AFailedCaptureFallsBackForThatSignatureOnly) {
  CudaGraphCache cache(8, kFakeCalls);
  g_fail_end_capture = true;
  ASSERT_TRUE(run(cache, {5}).ok());
  ASSERT_TRUE(run(cache, {5}).ok());
  ASSERT_TRUE(run(cache, {5}).ok());
  EXPECT_EQ(cache.num_graphs(), 0u);
  g_fail_end_capture = false;
  ASSERT_TRUE(run(cache, {6}).ok());
  ASSERT_TRUE(run(cache, {6}).ok());
  EXPECT_EQ(cache.num_graphs(), 1u);
}

// Integrated GPUs: pageable host memory only where the device says it can
// read it (cudaDevAttrPageableMemoryAccess; Jetson Orin-class iGPUs say no),
// pinned memory at its mapped address, discrete GPUs neither.
TEST(DeviceAddress, HostMemoryOnIntegratedGpus) {
  int data = 0;
  PointerInfo pageable;  // kUnregistered
  DeviceTraits orin{/*integrated=*/true, /*pageable_memory_access=*/false};
  DeviceTraits coherent{/*integrated=*/true, /*pageable_memory_access=*/true};
  DeviceTraits discrete{/*integrated=*/false, /*pageable_memory_access=*/true};
  EXPECT_EQ(device_address(pageable, &data, 0, orin), nullptr);
  EXPECT_EQ(device_address(pageable, &data, 0, coherent), &data);
  EXPECT_EQ(device_address(pageable, &data, 0, discrete), nullptr) << "discrete GPUs stage";

  int mapped = 0;
  PointerInfo pinned;
  pinned.kind = PointerKind::kHost;
  pinned.device_pointer = &mapped;
  EXPECT_EQ(device_address(pinned, &data, 0, orin), &mapped) << "the mapped address, not the host one";
  EXPECT_EQ(device_address(pinned, &data, 0, discrete), nullptr);
  pinned.device_pointer = nullptr;
  EXPECT_EQ(device_address(pinned, &data, 0, orin), nullptr) << "not mapped: staged";

  PointerInfo device;
  device.kind = PointerKind::kDevice;
  device.device = 1;
  EXPECT_EQ(device_address(device, &data, 1, discrete), &data);
  EXPECT_EQ(device_address(device, &data, 0, discrete), nullptr);
}

TEST(DeviceAddress, TheLegacyDefaultStreamIsRecognised) {
  EXPECT_TRUE(is_legacy_default_stream(nullptr));
  EXPECT_TRUE(is_legacy_default_stream(cudaStreamLegacy));
  EXPECT_FALSE(is_legacy_default_stream(cudaStreamPerThread));
}

}  // namespace
}  // namespace tte
