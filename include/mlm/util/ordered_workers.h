#pragma once
// One reader thread, N worker threads, results in reading order: the reader produces numbered
// items, any worker transforms any item, and take() hands them back in the order they were
// read, so what the caller sees never depends on thread timing. The read-ahead is bounded by
// the bytes of the items read and not yet taken, and by their count. The streaming
// tokenizer (data/tokenizing_pipeline.h) and the store writer's (data/store_tokenizing.h)
// both run on it. Errors travel inside the items (the callbacks catch them).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace mlm {

template <class Item>
class OrderedWorkers {
 public:
  struct Read {
    Item item;
    size_t bytes = 0;   // counted against Limits::max_bytes until taken
    bool last = false;  // the reader stops after this item
  };
  struct Limits {
    size_t max_bytes = 0;  // the reader waits while this many bytes are read and not taken
    size_t max_items = 0;  // or this many items
  };

  /// Starts the reader and `workers` workers. With workers == 0 no thread starts: take()
  /// reads and works on the caller's thread.
  OrderedWorkers(int workers, Limits limits, std::function<Read()> read, std::function<void(Item&)> work)
      : workers_(workers), limits_(limits), read_(std::move(read)), work_(std::move(work)) {
    if (workers_ == 0) return;
    threads_.emplace_back([this] { reader_loop(); });
    for (int i = 0; i < workers_; ++i) threads_.emplace_back([this] { worker_loop(); });
  }
  /// Stops the threads (after the item each is on) and joins them.
  ~OrderedWorkers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (auto& t : threads_) t.join();
  }
  OrderedWorkers(const OrderedWorkers&) = delete;
  OrderedWorkers& operator=(const OrderedWorkers&) = delete;

  /// The next item in reading order, once worked; waits for it. Not to be called again
  /// after the item read as last.
  Item take() {
    if (workers_ == 0) {
      Read r = read_();
      work_(r.item);
      return std::move(r.item);
    }
    Slot slot;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return done_.count(wanted_) > 0; });
      slot = std::move(done_.extract(wanted_++).mapped());
      bytes_in_flight_ -= slot.bytes;
    }
    changed_.notify_all();
    return std::move(slot.item);
  }

 private:
  struct Slot {
    uint64_t number = 0;
    Item item;
    size_t bytes = 0;
  };

  void reader_loop() {
    for (;;) {
      Read r = read_();
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] {
        return stop_ || (bytes_in_flight_ < limits_.max_bytes && next_number_ - wanted_ < limits_.max_items);
      });
      if (stop_) return;
      bytes_in_flight_ += r.bytes;
      todo_.push_back(Slot{next_number_++, std::move(r.item), r.bytes});
      changed_.notify_all();
      if (r.last) return;
    }
  }

  void worker_loop() {
    for (;;) {
      Slot slot;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || !todo_.empty(); });
        if (stop_) return;
        slot = std::move(todo_.front());
        todo_.pop_front();
      }
      work_(slot.item);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        const uint64_t number = slot.number;
        done_.emplace(number, std::move(slot));
      }
      changed_.notify_all();
    }
  }

  const int workers_;
  const Limits limits_;
  const std::function<Read()> read_;
  const std::function<void(Item&)> work_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Slot> todo_;          // read, waiting for a worker
  std::map<uint64_t, Slot> done_;  // worked, waiting for their turn
  size_t bytes_in_flight_ = 0;
  uint64_t next_number_ = 0;  // reader side
  uint64_t wanted_ = 0;       // consumer side
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace mlm
