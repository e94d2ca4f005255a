#include "backend/delegate_recorder.h"

namespace tte {
namespace {
thread_local DelegateRecorder* g_current = nullptr;
}  // namespace

DelegateRecorder* DelegateRecorder::current() { return g_current; }

DelegateRecorder::Scope::Scope(DelegateRecorder* recorder) : previous_(g_current) {
  g_current = recorder;
}

DelegateRecorder::Scope::~Scope() { g_current = previous_; }

}  // namespace tte
