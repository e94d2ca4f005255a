#include "common/et_status.h"

#include <cstdio>

namespace tte {

namespace et = executorch::runtime;

et::Error to_et_error(TteStatus code) {
  switch (code) {
    case TTE_OK:
      return et::Error::Ok;
    case TTE_ERROR_INVALID_ARGUMENT:
      return et::Error::InvalidArgument;
    case TTE_ERROR_NOT_ACCEPTED:
      return et::Error::DelegateInvalidCompatibility;
    case TTE_ERROR_OUT_OF_MEMORY:
    case TTE_ERROR_HOST_OUT_OF_MEMORY:
      return et::Error::MemoryAllocationFailed;
    case TTE_ERROR_NO_DEVICE:
    case TTE_ERROR_NOT_SUPPORTED:
      return et::Error::NotSupported;
    case TTE_ERROR_NOT_FOUND:
      return et::Error::NotFound;
    case TTE_ERROR_INVALID_PROGRAM:
      return et::Error::InvalidProgram;
    case TTE_ERROR_INVALID_STATE:
      return et::Error::InvalidState;
    default:
      return et::Error::Internal;
  }
}

TteStatus status_code_of(et::Error error) {
  switch (error) {
    case et::Error::Ok:
      return TTE_OK;
    case et::Error::InvalidArgument:
    case et::Error::InvalidType:
      return TTE_ERROR_INVALID_ARGUMENT;
    case et::Error::NotFound:
    case et::Error::AccessFailed:
      return TTE_ERROR_NOT_FOUND;
    case et::Error::InvalidProgram:
    case et::Error::InvalidExternalData:
      return TTE_ERROR_INVALID_PROGRAM;
    case et::Error::MemoryAllocationFailed:
    case et::Error::OutOfResources:
    case et::Error::DelegateMemoryAllocationFailed:
      return TTE_ERROR_OUT_OF_MEMORY;
    case et::Error::NotSupported:
    case et::Error::NotImplemented:
    case et::Error::OperatorMissing:
    case et::Error::DelegateInvalidCompatibility:
      return TTE_ERROR_NOT_SUPPORTED;
    case et::Error::InvalidState:
      return TTE_ERROR_INVALID_STATE;
    default:
      return TTE_ERROR_RUNTIME;
  }
}

std::string et_error_text(et::Error error) {
  char code[16];
  std::snprintf(code, sizeof(code), "0x%x", static_cast<unsigned>(error));
  return std::string(et::to_string(error)) + " (" + code + ")";
}

}  // namespace tte
