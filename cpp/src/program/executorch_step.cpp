#include "program/executorch_step.h"

#include "common/et_status.h"
#include "common/executorch_log.h"
#include "tte_version.h"

namespace tte {

namespace et = executorch::runtime;
using et::Error;

namespace {

constexpr const char* kSeeLog =
    "; TORCH_TENSORRT_EXECUTORCH_LOG_LEVEL=info shows ExecuTorch's log of it";

std::string explain_open(Error error, bool has_data_files) {
  switch (error) {
    case Error::InvalidProgram:
    case Error::InvalidArgument:
    case Error::InvalidType:
    case Error::InvalidState:
      return std::string("it is not a valid ExecuTorch program, or a truncated or damaged one") +
             (has_data_files ? " (or a .ptd given with it is damaged)" : "") +
             ": export it again, or copy it again if it was transferred";
    case Error::InvalidExternalData:
      return "a .ptd given with it is not a valid ExecuTorch data file: pass the .ptd written "
             "when this program was exported";
    case Error::NotSupported:
    case Error::NotImplemented:
      return "it was written by an ExecuTorch this runtime cannot read (this runtime is "
             "ExecuTorch " TTE_EXECUTORCH_VERSION_STRING "): export it with that version";
    case Error::AccessFailed:
    case Error::NotFound:
      return "the file could not be read to the end (it may have been changed or removed while "
             "it was opened): check the file and open it again";
    case Error::MemoryAllocationFailed:
    case Error::OutOfResources:
      return "there was not enough host memory to read it: free memory and open it again";
    default:
      return std::string("ExecuTorch could not read it") + kSeeLog;
  }
}

std::string explain_load_method(Error error, bool has_data_files) {
  switch (error) {
    case Error::OperatorMissing:
      return "the method calls an operator with no kernel in this runtime (it has ExecuTorch's "
             "portable and optimized kernels, XNNPACK and TensorRTBackend): export it with that "
             "operator delegated, or load a library that registers its kernel first";
    case Error::NotFound:
      return std::string(
                 "something the method refers to is not in this process or its data: a backend "
                 "that is not registered, or a named constant that ") +
             (has_data_files ? "no .ptd given holds: pass the .ptd exported with this program"
                             : "lives in a .ptd: pass the .ptd exported with this program");
    case Error::InvalidExternalData:
      return "a .ptd given does not fit this program (a constant it holds has another size or "
             "type than the program expects: it was written for another program or export): "
             "pass the .ptd exported with this program";
    case Error::MemoryAllocationFailed:
    case Error::OutOfResources:
      return "there was not enough memory for the method's buffers, constants or delegates: "
             "free memory, or load fewer methods at once";
    case Error::DelegateMemoryAllocationFailed:
      return "a delegate ran out of memory while it was initialized: free memory (host or "
             "device) and load the method again in a new program";
    case Error::DelegateInvalidCompatibility:
      return "a delegate refused its payload: it was written for another version of its backend "
             "or another device; export it again for this one";
    case Error::NotSupported:
    case Error::NotImplemented:
      return "the method needs something this runtime does not support (an instruction, a "
             "dtype or a delegate option ExecuTorch " TTE_EXECUTORCH_VERSION_STRING
             " lacks): export it with that version";
    case Error::Internal:
      return std::string("a kernel or delegate failed while the method was initialized") + kSeeLog;
    default:
      return std::string("ExecuTorch found the method's plan inconsistent: the program") +
             (has_data_files ? " or a .ptd given with it" : "") +
             " is damaged, or was written by an exporter this runtime does not match; export it "
             "again";
  }
}

std::string explain_set_input(Error error) {
  switch (error) {
    case Error::InvalidArgument:
    case Error::InvalidType:
      return "ExecuTorch refused the value: its type, dtype or shape does not fit what the "
             "method was exported with (an int, float or bool input must equal the value it was "
             "exported with)";
    case Error::NotSupported:
    case Error::NotImplemented:
      return "ExecuTorch cannot take this input this way (e.g. a new shape for a static input)";
    case Error::MemoryAllocationFailed:
    case Error::OutOfResources:
      return "there was not enough memory to hold the input";
    default:
      return std::string("ExecuTorch could not set the input") + kSeeLog;
  }
}

std::string explain_execute(Error error) {
  switch (error) {
    case Error::InvalidArgument:
    case Error::InvalidType:
      return "a kernel refused its arguments (a shape or dtype it cannot handle, e.g. a dynamic "
             "size past what the program was exported for): check the inputs against the "
             "method's input info";
    case Error::MemoryAllocationFailed:
    case Error::OutOfResources:
      return "the method ran out of its planned or temporary memory while running (a dynamic "
             "size may need more than the program planned): use smaller inputs";
    case Error::NotSupported:
    case Error::NotImplemented:
      return "a kernel does not support this case (a dtype, shape or argument combination)";
    case Error::InvalidState:
      return "the method was not ready to run (an input was not set, or an earlier run left it "
             "broken): open the program again";
    case Error::InvalidProgram:
      return "the method's plan is damaged (an instruction refers to a value that does not "
             "exist or has another type): export the program again";
    default:
      return std::string("a kernel or delegate failed while the method ran") + kSeeLog;
  }
}

// The status code of a bare Error at a step: a damaged plan is the
// program's fault, not the caller's argument.
TteStatus code_at(ProgramStep step, Error error) {
  const bool reading = step == ProgramStep::kOpen || step == ProgramStep::kMethodMeta ||
                       step == ProgramStep::kLoadMethod;
  if (reading && (error == Error::InvalidArgument || error == Error::InvalidType ||
                  error == Error::InvalidState)) {
    return TTE_ERROR_INVALID_PROGRAM;
  }
  if (step == ProgramStep::kExecute && error == Error::InvalidProgram) {
    return TTE_ERROR_INVALID_PROGRAM;
  }
  // Reading the program takes host memory only (explain_open says so).
  if (step == ProgramStep::kOpen &&
      (error == Error::MemoryAllocationFailed || error == Error::OutOfResources)) {
    return TTE_ERROR_HOST_OUT_OF_MEMORY;
  }
  return status_code_of(error);
}

}  // namespace

Status damaged_method_meta(Error error, const std::string& what) {
  return Status(TTE_ERROR_INVALID_PROGRAM,
                what + ": " + explain_executorch_error(ProgramStep::kMethodMeta, error, false) +
                    " (" + et_error_text(error) + ")");
}

std::string explain_executorch_error(ProgramStep step, Error error, bool has_data_files) {
  switch (step) {
    case ProgramStep::kOpen:
      return explain_open(error, has_data_files);
    case ProgramStep::kMethodMeta:
      return "the method's description in the program is damaged: export the program again";
    case ProgramStep::kLoadMethod:
      return explain_load_method(error, has_data_files);
    case ProgramStep::kSetInput:
      return explain_set_input(error);
    case ProgramStep::kSetOutput:
      return "ExecuTorch refused the buffer the Program API gave the output (its size or place "
             "does not fit the output's metadata): the method's output description is damaged; "
             "export the program again";
    case ProgramStep::kExecute:
      return explain_execute(error);
  }
  return "ExecuTorch failed";
}

ExecuTorchStep::ExecuTorchStep(CallContext& call, ProgramStep step)
    : step_(step), call_(call), in_progress_(call) {
  route_executorch_log();
  call_.failure.open();
}

ExecuTorchStep::~ExecuTorchStep() { call_.failure.close(); }

Status ExecuTorchStep::failed(Error error, const std::string& what, const std::string& source,
                              bool has_data_files) const {
  const Status& reported = call_.failure.reported();
  if (!reported.ok()) {
    return Status(reported.code(), what + ": " + source + reported.message());
  }
  std::string message = what + ": " + explain_executorch_error(step_, error, has_data_files) +
                        " (" + et_error_text(error);
  const auto& lines = call_.failure.log_lines();
  for (size_t i = 0; i < lines.size(); ++i) {
    message += (i == 0 ? "; ExecuTorch: " : " / ") + lines[i];
  }
  return Status(code_at(step_, error), message + ")");
}

}  // namespace tte
