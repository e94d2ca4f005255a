// TensorRT's IOutputAllocator for one data-dependent output of one engine
// handle (an output whose shape TensorRT reports with -1 once every input
// shape is set: nonzero, unique, masking, NMS heads). NvInferRuntime.h
// (IExecutionContext::setTensorAddress, 10.3 :3995-4001, 11.1 :4370-4376):
// "If getTensorShape(name) reports a -1 for any dimension of an output after
// all input shapes have been set, then to find out the dimensions, use
// setOutputAllocator() ... Calling both setTensorAddress and
// setOutputAllocator() for the same output is allowed, and can be useful for
// preallocating memory, and then reallocating if it's not big enough."
//
// So the backend binds its planned upper-bound buffer with setTensorAddress
// and says how large it is (`set_capacity`); when TensorRT asks for at most
// that, the buffer is returned ("If currentMemory is known to be big enough,
// one option is to return currentMemory", IOutputAllocator::
// reallocateOutputAsync, 10.3 :3466-3491, 11.1 :3855-3882); when it asks for
// more, the allocator gives memory of its own, grown and never shrunk, so
// nothing is truncated. notifyShape ("called ... sometime between when it
// calls reallocateOutput and enqueueV3 returns") records the shape.
//
// The override's signature is the same in TensorRT 10 and 11
// (reallocateOutputAsync, not the deprecated reallocateOutput).
#pragma once

#include <NvInferRuntime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tte::native {

class OutputAllocator : public nvinfer1::IOutputAllocator {
 public:
  explicit OutputAllocator(int device) : device_(device) {}
  ~OutputAllocator() override;
  OutputAllocator(const OutputAllocator&) = delete;
  OutputAllocator& operator=(const OutputAllocator&) = delete;

  // Before an enqueue: the bytes at the address set for the output, and a
  // fresh start (no shape known, no memory chosen).
  void set_capacity(int64_t bytes);

  void* reallocateOutputAsync(char const* tensorName, void* currentMemory, uint64_t size,
                              uint64_t alignment, cudaStream_t stream) noexcept override;
  void notifyShape(char const* tensorName, nvinfer1::Dims const& dims) noexcept override;

  // After enqueueV3 returned: whether TensorRT told the shape, the shape, and
  // where the elements are (NULL when TensorRT never asked for memory).
  bool has_shape() const { return has_shape_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  void* data() const { return data_; }
  // Why the last reallocateOutputAsync returned NULL, else empty.
  const std::string& failure() const { return failure_; }

 private:
  int device_;
  int64_t capacity_ = 0;
  void* own_ = nullptr;  // cudaMalloc'd on device_
  uint64_t own_bytes_ = 0;
  void* data_ = nullptr;
  bool has_shape_ = false;
  std::vector<int64_t> shape_;
  std::string failure_;
};

}  // namespace tte::native
