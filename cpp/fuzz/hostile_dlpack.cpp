#include "hostile_dlpack.h"

#include <climits>

namespace tte_fuzz {

void make_hostile_tensor(std::uint8_t choice, std::int32_t rank, const std::int64_t* sizes,
                         DLDataType dtype, std::size_t bytes, HostileTensor& out) {
  // The shape array holds `rank` entries (at least one), whatever ndim claims.
  const std::size_t entries = rank > 0 ? static_cast<std::size_t>(rank) : 1;
  out.shape.reset(new std::int64_t[entries]());
  for (std::int32_t d = 0; d < rank; ++d) out.shape[d] = sizes[d];
  out.bytes.assign(bytes, 0);
  out.tensor.data = out.bytes.empty() ? nullptr : out.bytes.data();
  out.tensor.device = DLDevice{kDLCPU, 0};
  out.tensor.ndim = rank;
  out.tensor.dtype = dtype;
  out.tensor.shape = out.shape.get();
  const std::uint8_t amount = choice >> 3;
  switch (choice & 7) {
    case 0:  // a rank past the method's, by 1 to 32
      out.tensor.ndim = rank + 1 + (amount & 31);
      break;
    case 1: {  // a rank no producer should claim
      static constexpr std::int32_t kRanks[] = {17, 64, 65, 1 << 20, INT32_MAX, -1, INT32_MIN, 0};
      out.tensor.ndim = kRanks[amount & 7];
      break;
    }
    case 2: {  // strides of `rank` entries: zero, negative, huge, or one off
      out.strides.reset(new std::int64_t[entries]());
      static constexpr std::int64_t kStrides[] = {0, -1, 1, 2, 3, INT64_MAX, INT64_MIN, 1 << 30};
      for (std::size_t d = 0; d < entries; ++d) out.strides[d] = kStrides[(amount + d) & 7];
      out.tensor.strides = out.strides.get();
      break;
    }
    case 3: {  // an odd offset into the data (the memory past it is there: a producer
               // vouches for data + byte_offset, so a larger one would be its own lie)
      static constexpr std::uint64_t kOffsets[] = {1, 2, 3, 7, 8, 16, 64, 4096};
      const std::uint64_t offset = kOffsets[amount & 7];
      out.bytes.assign(bytes + offset, 0);
      out.tensor.data = out.bytes.data();
      out.tensor.byte_offset = offset;
      break;
    }
    case 4:  // NULL data with no elements: a zero in the first dim, where there is one
      if (rank > 0) out.shape[0] = 0;
      out.tensor.data = nullptr;
      break;
    case 5:  // NULL data, shape as the method's (elements unless a dim is 0)
      out.tensor.data = nullptr;
      break;
    case 6:  // a negative or huge size in one dim
      if (rank > 0) out.shape[amount % rank] = (amount & 1) ? -1 : INT64_MAX;
      break;
    default:  // read-only memory (DLPack 1.x flag): in-place writes must be refused
      out.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
      break;
  }
}

}  // namespace tte_fuzz
