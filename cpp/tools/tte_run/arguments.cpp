#include "tools/tte_run/arguments.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tte::tools {

extern const char kUsage[];
const char kUsage[] =
    "usage: tte-run MODEL.pte [--data F.ptd ...] [--method M] [--input F.npy|VALUE ...]\n"
    "               [--num-runs N] [--warmup N] [--provider LIB ...]\n"
    "               [--option BACKEND.KEY=VALUE ...] [--save-outputs DIR] [--json]\n"
    "       tte-run --list-providers [--provider LIB ...]\n"
    "\n"
    "Runs method M (default: forward, else the first) of MODEL.pte through the\n"
    "TensorRTBackend plugin and prints each output's dtype, shape and checksum (the\n"
    "sum of its elements as double) and latency percentiles over N runs (default 10,\n"
    "after 1 warmup run).\n"
    "\n"
    "  --data F.ptd        external data file; repeat for several\n"
    "  --input F.npy       one per method input, in order: a little-endian C-order\n"
    "                      .npy for tensors, a number or true/false for scalars;\n"
    "                      default: ones of the declared shape (upper bounds) and dtype\n"
    "  --provider LIB      load an engine-provider library (tte_engine_provider_entry)\n"
    "  --option B.K=V      load-time backend option; V is true/false, an integer that\n"
    "                      fits 32 bits, or else a string\n"
    "                      (e.g. TensorRTBackend.provider=test-host)\n"
    "  --save-outputs DIR  write DIR/output_<i>.npy per tensor output and\n"
    "                      DIR/outputs.json describing them\n"
    "  --json              print one JSON document instead of text\n"
    "  --list-providers    list the engine providers in selection order and the\n"
    "                      runtime each found (the native TensorRT provider is\n"
    "                      registered by the plugin when it is installed beside it)\n"
    "\n"
    "Exit status: 0 ok, 1 failure, 2 usage error.\n";

namespace {

// The usage, then TensorRTBackend's load options from the plugin's table.
void print_help() {
  std::fputs(kUsage, stdout);
  std::fputs("\nTensorRTBackend's load options (--option TensorRTBackend.KEY=VALUE):\n", stdout);
  for (size_t i = 0; i < tte_num_load_options(); ++i) {
    TteLoadOptionInfo info{};
    info.struct_size = sizeof(info);
    if (tte_load_option_info(i, &info, nullptr) == TTE_OK) {
      std::printf("  %-25s %s; default: %s\n", info.name, info.type, info.fallback);
    }
  }
}

bool parse_count(const std::string& text, int minimum, int* out) {
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  *out = std::stoi(text);
  return *out >= minimum;
}

}  // namespace

std::optional<UsageError> parse_arguments(int argc, char** argv, Arguments* args) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) -> bool {
      if (i + 1 >= argc) {
        return false;
      }
      *out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "-h" || arg == "--help") {
      print_help();
      std::exit(kExitOk);
    } else if (arg == "--json") {
      args->json = true;
    } else if (arg == "--list-providers") {
      args->list_providers = true;
    } else if (arg == "--data" || arg == "--input" || arg == "--provider" || arg == "--option" ||
               arg == "--method" || arg == "--save-outputs" || arg == "--num-runs" ||
               arg == "--warmup") {
      if (!value(&text)) {
        return UsageError{arg + " needs a value"};
      }
      if (arg == "--data") {
        args->data_paths.push_back(text);
      } else if (arg == "--input") {
        args->inputs.push_back(text);
      } else if (arg == "--provider") {
        args->providers.push_back(text);
      } else if (arg == "--option") {
        args->options.push_back(text);
      } else if (arg == "--method") {
        args->method = text;
      } else if (arg == "--save-outputs") {
        args->save_dir = text;
      } else if (arg == "--num-runs" && !parse_count(text, 1, &args->num_runs)) {
        return UsageError{"--num-runs takes a positive integer, got '" + text + "'"};
      } else if (arg == "--warmup" && !parse_count(text, 0, &args->warmup)) {
        return UsageError{"--warmup takes a non-negative integer, got '" + text + "'"};
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return UsageError{"unknown option '" + arg + "'"};
    } else if (args->model.empty()) {
      args->model = arg;
    } else {
      return UsageError{"more than one model given ('" + args->model + "', '" + arg + "')"};
    }
  }
  if (args->model.empty() && !args->list_providers) {
    return UsageError{"no model given"};
  }
  return std::nullopt;
}

std::optional<UsageError> parse_option(const std::string& text, OptionText* out) {
  const size_t dot = text.find('.');
  const size_t equals = text.find('=');
  if (dot == std::string::npos || equals == std::string::npos || dot == 0 || equals < dot + 2) {
    return UsageError{"--option takes BACKEND.KEY=VALUE, got '" + text + "'"};
  }
  out->backend = text.substr(0, dot);
  out->key = text.substr(dot + 1, equals - dot - 1);
  out->value = text.substr(equals + 1);
  out->option.backend = out->backend.c_str();
  out->option.key = out->key.c_str();
  if (out->value == "true" || out->value == "false") {
    out->option.type = TTE_OPTION_BOOL;
    out->option.int_value = out->value == "true" ? 1 : 0;
    return std::nullopt;
  }
  char* end = nullptr;
  errno = 0;
  const long long number = std::strtoll(out->value.c_str(), &end, 10);
  if (!out->value.empty() && *end == '\0' && errno == 0 &&
      number >= std::numeric_limits<int32_t>::min() &&
      number <= std::numeric_limits<int32_t>::max()) {
    out->option.type = TTE_OPTION_INT;
    out->option.int_value = number;
    return std::nullopt;
  }
  out->option.type = TTE_OPTION_STRING;
  out->option.string_value = out->value.c_str();
  return std::nullopt;
}

}  // namespace tte::tools
