#pragma once
// SIGINT/SIGTERM while training: the handler only records the signal; the trainer notices it
// at the next step boundary, writes a checkpoint and exits 130/143. A second identical signal
// kills the process the default way (the user insists).
namespace mlm::train {

class StopSignals {
 public:
  /// Forgets any earlier signal and installs the handlers; the destructor restores the
  /// previous ones.
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  /// The first signal received (SIGINT or SIGTERM), or 0.
  static int pending();
};

}  // namespace mlm::train
