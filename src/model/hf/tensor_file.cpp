#include "mlm/model/hf/tensor_file.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <unordered_map>

#include "mlm/util/errors.h"
#include "mlm/util/utf8_decode.h"

namespace mlm::model {
namespace {

// The Python objects a state-dict pickle builds, and nothing more.
struct PyObj;
using Obj = std::shared_ptr<PyObj>;
struct PyObj {
  enum class Kind { none, boolean, integer, real, string, tuple, list, dict, global, tensor };
  Kind kind = Kind::none;
  int64_t i = 0;
  double f = 0;
  std::string s;                              // string, "module.name" of a global, or a tensor's storage record
  std::vector<Obj> items;                     // tuple, list
  std::vector<std::pair<Obj, Obj>> entries;   // dict (insertion order)
  torch::Tensor t;
  int depth = 0;           // levels of objects below this one (0: holds none)
  bool contained = false;  // inside another object: a list or dict then takes no more items
};

// Objects nest at most this deep. Freeing them (a shared_ptr chain) recurses once per level on
// the C++ stack, so a pickle of a million nested tuples (a few bytes each) would overflow it.
// Python's pickler stops near its recursion limit (1000 by default), so torch.save never
// writes deeper, and a state dict is 3 or 4 levels.
constexpr int kMaxNesting = 1000;

Obj make(PyObj::Kind kind) {
  auto o = std::make_shared<PyObj>();
  o->kind = kind;
  return o;
}

c10::ScalarType dtype_of_storage(const std::string& name) {
  static const std::map<std::string, c10::ScalarType> table = {
      {"torch.FloatStorage", torch::kFloat32},   {"torch.DoubleStorage", torch::kFloat64},
      {"torch.HalfStorage", torch::kFloat16},    {"torch.BFloat16Storage", torch::kBFloat16},
      {"torch.LongStorage", torch::kInt64},      {"torch.IntStorage", torch::kInt32},
      {"torch.ShortStorage", torch::kInt16},     {"torch.CharStorage", torch::kInt8},
      {"torch.ByteStorage", torch::kUInt8},      {"torch.BoolStorage", torch::kBool}};
  auto it = table.find(name);
  if (it == table.end()) throw std::runtime_error("unsupported storage type " + name);
  return it->second;
}

// The size a zip entry claims, bounded before it is allocated. torch.save stores its records
// uncompressed, so none is larger than the file; miniz checks that only for small stored
// entries, not for deflated or zip64 ones, whose claimed size getRecord would allocate.
size_t record_size(caffe2::serialize::PyTorchStreamReader& zip, const std::string& record, uint64_t file_bytes) {
  const size_t size = zip.getRecordSize(record);
  if (size > file_bytes)
    throw std::runtime_error("record " + record + " claims " + std::to_string(size) + " bytes, more than the file's " +
                             std::to_string(file_bytes) + " (torch.save stores records uncompressed)");
  return size;
}

class StateDictUnpickler {
 public:
  StateDictUnpickler(const std::vector<char>& bytes, caffe2::serialize::PyTorchStreamReader& zip,
                     uint64_t file_bytes)
      : data_(bytes), zip_(zip), file_bytes_(file_bytes) {}

  Obj run() {
    for (;;) {
      const uint8_t op = u8();
      switch (op) {
        case 0x80: u8(); break;                               // PROTO
        case '.': return pop();                               // STOP
        case '(': marks_.push_back(stack_.size()); break;     // MARK
        case 'N': stack_.push_back(make(PyObj::Kind::none)); break;
        case 0x88: case 0x89: {                               // NEWTRUE / NEWFALSE
          auto o = make(PyObj::Kind::boolean);
          o->i = op == 0x88;
          stack_.push_back(o);
          break;
        }
        case 'K': push_int(u8()); break;                      // BININT1
        case 'M': push_int(u16()); break;                     // BININT2
        case 'J': push_int(static_cast<int32_t>(u32())); break;  // BININT
        case 0x8a: {                                          // LONG1
          const uint8_t n = u8();
          if (n > 8) throw std::runtime_error("integer too large");
          int64_t v = 0;
          for (uint8_t k = 0; k < n; ++k) v |= static_cast<int64_t>(u8()) << (8 * k);
          if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v -= int64_t{1} << (8 * n);  // sign
          push_int(v);
          break;
        }
        case 'G': {                                           // BINFLOAT (big endian)
          uint64_t bits = 0;
          for (int k = 0; k < 8; ++k) bits = (bits << 8) | u8();
          auto o = make(PyObj::Kind::real);
          std::memcpy(&o->f, &bits, 8);
          stack_.push_back(o);
          break;
        }
        case 'X': push_string(u32()); break;                  // BINUNICODE
        case 0x8c: push_string(u8()); break;                  // SHORT_BINUNICODE
        case 'c': {                                           // GLOBAL
          auto o = make(PyObj::Kind::global);
          const std::string module = line();  // two statements: operand order is unspecified
          o->s = module + "." + line();
          stack_.push_back(o);
          break;
        }
        case 'q': memo_[u8()] = top(); break;                 // BINPUT
        case 'r': memo_[u32()] = top(); break;                // LONG_BINPUT
        case 'h': stack_.push_back(memo_get(u8())); break;    // BINGET
        case 'j': stack_.push_back(memo_get(u32())); break;   // LONG_BINGET
        case ')': stack_.push_back(make(PyObj::Kind::tuple)); break;
        case ']': stack_.push_back(make(PyObj::Kind::list)); break;
        case '}': stack_.push_back(make(PyObj::Kind::dict)); break;
        case 't': {                                           // TUPLE
          auto o = make(PyObj::Kind::tuple);
          o->items = pop_to_mark();
          for (const auto& item : o->items) nest(*o, item);
          stack_.push_back(o);
          break;
        }
        case 0x85: case 0x86: case 0x87: {                    // TUPLE1..3
          auto o = make(PyObj::Kind::tuple);
          o->items.resize(op - 0x84);
          for (auto k = o->items.size(); k-- > 0;) o->items[k] = pop();
          for (const auto& item : o->items) nest(*o, item);
          stack_.push_back(o);
          break;
        }
        case 'a': {                                           // APPEND
          auto v = pop();
          auto list = open_container(top(), PyObj::Kind::list);
          nest(*list, v);
          list->items.push_back(v);
          break;
        }
        case 'e': {                                           // APPENDS
          auto vs = pop_to_mark();
          auto list = open_container(top(), PyObj::Kind::list);
          for (const auto& v : vs) nest(*list, v);
          list->items.insert(list->items.end(), vs.begin(), vs.end());
          break;
        }
        case 's': {                                           // SETITEM
          auto v = pop();
          auto k = pop();
          auto d = open_container(top(), PyObj::Kind::dict);
          nest(*d, k);
          nest(*d, v);
          d->entries.emplace_back(k, v);
          break;
        }
        case 'u': {                                           // SETITEMS
          auto kv = pop_to_mark();
          auto d = open_container(top(), PyObj::Kind::dict);
          for (size_t k = 0; k + 1 < kv.size(); k += 2) {
            nest(*d, kv[k]);
            nest(*d, kv[k + 1]);
            d->entries.emplace_back(kv[k], kv[k + 1]);
          }
          break;
        }
        case 'b': pop(); break;  // BUILD: OrderedDict._metadata (module versions) is not needed
        case 'Q': {                                           // BINPERSID
          auto pid = pop();
          stack_.push_back(load_storage(*pid));
          break;
        }
        case 'R': {                                           // REDUCE
          auto args = pop();
          auto fn = pop();
          stack_.push_back(reduce(*fn, *args));
          break;
        }
        default: {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02x", op);
          throw std::runtime_error(std::string("unsupported pickle opcode ") + hex + " at byte " +
                                   std::to_string(pos_ - 1) + " of data.pkl");
        }
      }
    }
  }

 private:
  uint8_t u8() {
    if (pos_ >= data_.size()) throw std::runtime_error("data.pkl ends early");
    return static_cast<uint8_t>(data_[pos_++]);
  }
  uint32_t u16() { uint32_t lo = u8(); return lo | (uint32_t{u8()} << 8); }
  uint32_t u32() { uint32_t lo = u16(); return lo | (u16() << 16); }
  std::string line() {
    std::string out;
    for (char c; (c = static_cast<char>(u8())) != '\n';) out += c;
    return out;
  }
  void push_int(int64_t v) {
    auto o = make(PyObj::Kind::integer);
    o->i = v;
    stack_.push_back(o);
  }
  void push_string(size_t n) {
    if (n > data_.size() - pos_) throw std::runtime_error("data.pkl ends early");
    auto o = make(PyObj::Kind::string);
    o->s.assign(data_.data() + pos_, n);
    // A pickled str is UTF-8 (Python would not load it otherwise); its keys name tensors in
    // the JSON of a safetensors export.
    if (const size_t valid = utf8_valid_prefix(o->s); valid != n)
      throw std::runtime_error("the string at byte " + std::to_string(pos_ + valid) +
                               " of data.pkl is not UTF-8");
    pos_ += n;
    stack_.push_back(o);
  }
  Obj top() {
    if (stack_.empty()) throw std::runtime_error("malformed pickle (empty stack)");
    return stack_.back();
  }
  Obj pop() {
    auto o = top();
    stack_.pop_back();
    return o;
  }
  std::vector<Obj> pop_to_mark() {
    if (marks_.empty()) throw std::runtime_error("malformed pickle (no mark)");
    const size_t start = marks_.back();
    marks_.pop_back();
    if (start > stack_.size()) throw std::runtime_error("malformed pickle (mark)");
    std::vector<Obj> out(stack_.begin() + static_cast<std::ptrdiff_t>(start), stack_.end());
    stack_.resize(start);
    return out;
  }
  Obj memo_get(uint32_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) throw std::runtime_error("malformed pickle (memo " + std::to_string(key) + ")");
    return it->second;
  }
  // The list or dict that APPEND(S) / SETITEM(S) add to. A pickle may fetch a container from
  // the memo and add to it after it is already inside another: to itself (a shared_ptr cycle,
  // never freed) or below its own descendants (nesting past the depth recorded). Python's
  // pickler fills a container before it places it (only a self-referencing object is written
  // otherwise), so a container that is inside another is refused as a target.
  static Obj open_container(const Obj& o, PyObj::Kind kind) {
    if (o->kind != kind)
      throw std::runtime_error(kind == PyObj::Kind::dict ? "malformed pickle (items set on a non-dict)"
                                                          : "malformed pickle (items appended to a non-list)");
    if (o->contained)
      throw std::runtime_error("malformed pickle (items added to a list or dict that is already inside another "
                               "object: a self-referencing object)");
    return o;
  }
  // Records that `child` is now inside `parent`: no cycle, and the depth bounded.
  static void nest(PyObj& parent, const Obj& child) {
    if (child.get() == &parent) throw std::runtime_error("malformed pickle (a list or dict inside itself)");
    child->contained = true;
    parent.depth = std::max(parent.depth, child->depth + 1);
    if (parent.depth > kMaxNesting)
      throw std::runtime_error("malformed pickle (objects nested more than " + std::to_string(kMaxNesting) +
                               " deep)");
  }
  static std::vector<int64_t> ints(const PyObj& tuple) {
    std::vector<int64_t> out;
    for (const auto& o : tuple.items) {
      if (o->kind != PyObj::Kind::integer) throw std::runtime_error("expected a tuple of integers");
      out.push_back(o->i);
    }
    return out;
  }

  // ('storage', torch.FloatStorage, key, location, numel) -> a 1-d tensor over data/<key>.
  Obj load_storage(const PyObj& pid) {
    if (pid.kind != PyObj::Kind::tuple || pid.items.size() < 5 || pid.items[0]->s != "storage" ||
        pid.items[1]->kind != PyObj::Kind::global || pid.items[4]->kind != PyObj::Kind::integer)
      throw std::runtime_error("unsupported persistent id (not a tensor storage)");
    const std::string& key = pid.items[2]->s;
    auto cached = storages_.find(key);
    if (cached != storages_.end()) return cached->second;
    const auto dtype = dtype_of_storage(pid.items[1]->s);
    const int64_t numel = pid.items[4]->i;
    const std::string record = "data/" + key;
    // The element count is the file's: its byte size must not wrap int64 into a small number
    // that matches a small record (LibTorch would then refuse the count with its own message).
    int64_t want = 0;
    if (numel < 0 || __builtin_mul_overflow(numel, static_cast<int64_t>(c10::elementSize(dtype)), &want))
      throw std::runtime_error("record " + record + ": storage of " + std::to_string(numel) + " " +
                               pid.items[1]->s + " elements is not a size a tensor can have");
    if (!zip_.hasRecord(record)) throw std::runtime_error("record " + record + " is missing");
    const size_t size = record_size(zip_, record, file_bytes_);
    if (size != static_cast<uint64_t>(want))
      throw std::runtime_error("record " + record + " has " + std::to_string(size) +
                               " bytes, expected " + std::to_string(want));
    auto ptr = std::get<0>(zip_.getRecord(record));
    auto storage = torch::empty({numel}, torch::TensorOptions().dtype(dtype));
    if (want > 0) std::memcpy(storage.data_ptr(), ptr.get(), size);
    auto o = make(PyObj::Kind::tensor);
    o->t = storage;
    o->s = record;
    storages_[key] = o;
    return o;
  }

  Obj reduce(const PyObj& fn, const PyObj& args) {
    if (fn.kind != PyObj::Kind::global || args.kind != PyObj::Kind::tuple)
      throw std::runtime_error("malformed pickle (REDUCE)");
    const auto& a = args.items;
    if (fn.s == "collections.OrderedDict") return make(PyObj::Kind::dict);
    if (fn.s == "torch._utils._rebuild_tensor_v2" || fn.s == "torch._utils._rebuild_tensor") {
      if (a.size() < 4 || a[0]->kind != PyObj::Kind::tensor || a[1]->kind != PyObj::Kind::integer)
        throw std::runtime_error("malformed tensor record");
      const std::string& record = a[0]->s;
      const auto sizes = ints(*a[2]);
      const auto strides = ints(*a[3]);
      const int64_t offset = a[1]->i;
      if (sizes.size() != strides.size() || offset < 0)
        throw std::runtime_error("tensor over record " + record + ": malformed sizes, strides or offset");
      // Bounds check: as_strided would read past the storage of a corrupt file. The last
      // element's index, offset + sum((size - 1) * stride), and the element count are the
      // file's int64s: checked for overflow, as a wrapped sum would pass for an index inside.
      int64_t last = offset, numel = 1;
      bool overflow = false;
      for (size_t d = 0; d < sizes.size(); ++d) {
        if (sizes[d] < 0 || strides[d] < 0)
          throw std::runtime_error("tensor over record " + record + ": negative size or stride");
        int64_t span = 0;
        overflow = overflow || __builtin_mul_overflow(numel, sizes[d], &numel);
        if (sizes[d] > 0)
          overflow = overflow || __builtin_mul_overflow(sizes[d] - 1, strides[d], &span) ||
                     __builtin_add_overflow(last, span, &last);
      }
      if (overflow || (numel > 0 && last >= a[0]->t.numel()))
        throw std::runtime_error("tensor over record " + record + " exceeds its storage of " +
                                 std::to_string(a[0]->t.numel()) + " elements");
      auto o = make(PyObj::Kind::tensor);
      o->t = a[0]->t.as_strided(sizes, strides, offset);
      o->s = record;
      return o;
    }
    if (fn.s == "torch._utils._rebuild_parameter" ||
        fn.s == "torch._utils._rebuild_parameter_with_state" ||
        fn.s == "torch.jit._pickle.restore_type_tag") {
      if (a.empty()) throw std::runtime_error("malformed pickle (" + fn.s + ")");
      return a[0];
    }
    throw std::runtime_error("unsupported object " + fn.s + " (not a dict of tensors)");
  }

  const std::vector<char>& data_;
  caffe2::serialize::PyTorchStreamReader& zip_;
  const uint64_t file_bytes_;
  size_t pos_ = 0;
  std::vector<Obj> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint32_t, Obj> memo_;
  std::unordered_map<std::string, Obj> storages_;
};

std::string first_line(const std::string& what) {
  return what.substr(0, what.find('\n'));
}

}  // namespace

TensorDict read_tensor_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError(path + ": cannot open weight file");
  char magic[4] = {0, 0, 0, 0};
  in.read(magic, 4);
  if (in.gcount() < 4 || std::memcmp(magic, "PK\x03\x04", 4) != 0) {
    if (in.gcount() >= 2 && static_cast<uint8_t>(magic[0]) == 0x80)
      throw CheckpointError(path + ": legacy torch.save format (PyTorch < 1.6) is not supported; "
                            "re-save it in Python with torch.save(torch.load(f), f)");
    throw CheckpointError(path + ": not a PyTorch weight file (no zip header)");
  }
  in.close();
  try {
    const uint64_t file_bytes = std::filesystem::file_size(path);
    caffe2::serialize::PyTorchStreamReader zip(path);
    if (!zip.hasRecord("data.pkl")) throw std::runtime_error("no data.pkl record");
    record_size(zip, "data.pkl", file_bytes);
    auto [pkl_ptr, pkl_size] = zip.getRecord("data.pkl");
    const char* pkl = static_cast<const char*>(pkl_ptr.get());
    std::vector<char> bytes(pkl, pkl + pkl_size);
    auto root = StateDictUnpickler(bytes, zip, file_bytes).run();
    if (root->kind != PyObj::Kind::dict) throw std::runtime_error("top-level object is not a dict");
    TensorDict out;
    for (const auto& [k, v] : root->entries) {
      if (k->kind != PyObj::Kind::string) throw std::runtime_error("a key is not a string");
      if (v->kind != PyObj::Kind::tensor)
        throw std::runtime_error("value of '" + k->s + "' is not a tensor");
      out.emplace_back(k->s, v->t);
    }
    return out;
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    throw CheckpointError(path + ": not a readable weight file: " + first_line(e.what()));
  }
}

void write_tensor_file(const std::string& path, const TensorDict& tensors) {
  c10::Dict<std::string, torch::Tensor> dict;
  // The same tensor object twice (tied weights) is written once and shared, as torch.save does.
  std::unordered_map<const void*, torch::Tensor> copies;
  for (const auto& [name, tensor] : tensors) {
    const void* id = tensor.unsafeGetTensorImpl();
    auto it = copies.find(id);
    if (it == copies.end())
      it = copies.emplace(id, tensor.detach().to(torch::kCPU).clone(at::MemoryFormat::Contiguous)).first;
    if (dict.contains(name)) throw CheckpointError(path + ": duplicate key " + name);
    dict.insert(name, it->second);
  }
  // torch::pickle_save, but with a plain dict: its typed dict is wrapped in
  // torch.jit._pickle.restore_type_tag, a global that torch.load(weights_only=True) (2.x's
  // default) refuses. Tensors become _rebuild_tensor_v2 calls on zip storage records, as in
  // every torch.save file.
  std::vector<char> pickle;
  torch::jit::Pickler pickler(
      [&](const char* bytes, size_t n) { pickle.insert(pickle.end(), bytes, bytes + n); },
      nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(c10::IValue(dict));
  pickler.stop();
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    // A failed write (a full disk) is noted here and reported below, not to the zip writer:
    // it would throw, and throw again from its destructor while unwinding (std::terminate).
    bool write_failed = !out;
    caffe2::serialize::PyTorchStreamWriter zip([&](const void* bytes, size_t n) {
      if (!write_failed) {
        out.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
        write_failed = !out;
      }
      return n;
    });
    torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(),
                                       zip);
    zip.writeEndOfFile();
    out.close();
    if (write_failed || !out) throw CheckpointError(tmp + ": cannot write weight file");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw CheckpointError(path + ": cannot rename " + tmp + ": " + ec.message());
}

}  // namespace mlm::model
