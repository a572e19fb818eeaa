#pragma once
// TensorBoard's event files, written without TensorFlow: TFRecord framing (length, masked
// CRC-32C of the length, the record, masked CRC-32C of the record) around `Event` protocol
// buffers encoded by hand, with the few fields scalars need:
//   Event { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//   Summary { repeated Value value = 1; }  Value { string tag = 1; float simple_value = 2; }
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace mlm::train {

struct Scalar {
  std::string tag;  // "train/loss"
  float value = 0;
};

/// The first event of a file: its format version ("brain.Event:2").
std::string version_event(double wall_time);
/// One event holding `scalars` at `step`.
std::string scalars_event(double wall_time, int64_t step, const std::vector<Scalar>& scalars);
/// An event's step field (0 when absent, as in the version event).
int64_t event_step(const std::string& event);

/// `record` framed as TFRecord stores it.
std::string framed_record(const std::string& record);
/// The records of an event file, in order, up to the first torn or damaged one (a killed
/// writer's last record); an absent file has none.
std::vector<std::string> read_records(const std::filesystem::path& path);

}  // namespace mlm::train
