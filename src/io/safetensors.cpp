#include "seedrl/io/safetensors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

#include "seedrl/core/atomic_file.hpp"
#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/crc32c.hpp"

#include "json.hpp"

namespace seedrl::io {

namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100u << 20;

bool dtype_from_name(std::string_view name, DType* dtype) {
  if (name == "F32")
    *dtype = DType::f32;
  else if (name == "U8")
    *dtype = DType::u8;
  else if (name == "I32")
    *dtype = DType::i32;
  else
    return false;
  return true;
}

std::string hex32(std::uint32_t value) {
  char text[9];
  std::snprintf(text, sizeof text, "%08x", value);
  return text;
}

std::string tensor_checksum_key(const std::string& name) {
  return std::string(kChecksumKey) + "/" + name;
}

void append_field(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

}  // namespace

std::string checksum_text(const std::vector<SafetensorsFile::Entry>& entries,
                          const Metadata& metadata) {
  std::vector<const SafetensorsFile::Entry*> sorted;
  for (const auto& e : entries) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->name < b->name; });
  std::string text;
  for (const SafetensorsFile::Entry* e : sorted) {
    append_field(text, "tensor");
    append_field(text, e->name);
    append_field(text, safetensors_dtype(e->dtype));
    std::string dims;
    for (int i = 0; i < e->shape.rank(); ++i) dims += std::to_string(e->shape[i]) + ",";
    append_field(text, dims);
    append_field(text, std::to_string(e->begin));
    append_field(text, std::to_string(e->end));
  }
  for (const auto& [key, value] : metadata) {  // a std::map: in name order
    if (key == kChecksumKey) continue;
    append_field(text, "metadata");
    append_field(text, key);
    append_field(text, value);
  }
  return text;
}

std::string_view safetensors_dtype(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "F32";
    case DType::u8:
      return "U8";
    case DType::i32:
      return "I32";
  }
  return "?";
}

std::string encode_safetensors(std::span<const NamedTensor> tensors, const Metadata& metadata) {
  std::set<std::string_view> names;
  json::Value members = json::Value::object();
  std::size_t offset = 0;
  for (const auto& [key, value] : metadata)
    SEEDRL_REQUIRE(!key.starts_with(kChecksumKey), "safetensors: metadata key '", key,
                   "' is reserved for checksums");
  Metadata meta = metadata;
  std::vector<SafetensorsFile::Entry> entries;
  for (const NamedTensor& t : tensors) {
    SEEDRL_REQUIRE(!t.name.empty() && t.name != "__metadata__",
                   "safetensors: invalid tensor name '", t.name, "'");
    SEEDRL_REQUIRE(names.insert(t.name).second, "safetensors: duplicate tensor name '", t.name,
                   "'");
    SEEDRL_REQUIRE(t.tensor.defined() && t.tensor.device() == Device::cpu, "safetensors: tensor '",
                   t.name, "' must be a defined CPU tensor");
    json::Value shape = json::Value::array();
    for (int i = 0; i < t.tensor.rank(); ++i) shape.push_back(t.tensor.dim(i));
    members[t.name] = {{"dtype", std::string(safetensors_dtype(t.tensor.dtype()))},
                       {"shape", std::move(shape)},
                       {"data_offsets", {offset, offset + t.tensor.bytes()}}};
    entries.push_back(
        {t.name, t.tensor.dtype(), t.tensor.shape(), offset, offset + t.tensor.bytes()});
    meta[tensor_checksum_key(t.name)] =
        hex32(crc32c(t.tensor.bytes() > 0 ? t.tensor.raw_data() : nullptr, t.tensor.bytes()));
    offset += t.tensor.bytes();
  }
  meta[std::string(kChecksumKey)] = hex32(crc32c(checksum_text(entries, meta)));
  members["__metadata__"] = meta;
  std::string header = json::dump(members, "safetensors header");
  while ((8 + header.size()) % 8 != 0) header += ' ';  // data starts 8-byte aligned

  ByteWriter out;
  out.put<std::uint64_t>(header.size());
  out.bytes(header.data(), header.size());
  for (const NamedTensor& t : tensors)
    if (t.tensor.bytes() > 0)
      out.bytes(t.tensor.raw_data(), t.tensor.bytes());  // little-endian host
  return std::move(out.data());
}

void write_safetensors(const std::string& path, std::span<const NamedTensor> tensors,
                       const Metadata& metadata, const std::function<void()>& before_replace) {
  write_file_atomically(path, encode_safetensors(tensors, metadata), before_replace);
}

namespace {

// Every name of a JSON object at most once: readers that keep the first of duplicate names
// (seedrl's) and readers that keep the last (many JSON libraries) would see different files, so
// such a file is refused, as Python's safetensors refuses it.
void require_unique_names(const json::Value& object, const std::string& what) {
  std::set<std::string_view> seen;
  for (const auto& [name, value] : json::as_object(object, what))
    SEEDRL_REQUIRE(seen.insert(name).second, what, " holds the name '", name, "' twice");
}

// The header's JSON, its names each once.
json::Value parse_header(std::string_view header, const std::string& src) {
  json::Value value = json::parse(header, src);
  require_unique_names(value, src + ": header");
  if (const json::Value* meta = json::find(value, "__metadata__"))
    require_unique_names(*meta, src + ": __metadata__");
  return value;
}

}  // namespace

SafetensorsFile SafetensorsFile::read(const std::string& path) {
  return parse(read_file(path), path);
}

Metadata SafetensorsFile::read_metadata(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  SEEDRL_REQUIRE(in.good(), path, ": cannot open for reading");
  in.seekg(0, std::ios::end);
  const auto file_size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  SEEDRL_REQUIRE(file_size >= 8, path, ": not a safetensors file (", file_size,
                 " bytes, shorter than the 8-byte header length)");
  std::string length(8, '\0');
  in.read(length.data(), 8);
  const auto header_size = ByteReader(length, path).get<std::uint64_t>();
  SEEDRL_REQUIRE(header_size <= kMaxHeaderBytes && header_size <= file_size - 8, path,
                 ": header length ", header_size, " does not fit in the file of ", file_size,
                 " bytes (truncated or not a safetensors file)");
  std::string header(header_size, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_size));
  SEEDRL_REQUIRE(in.good(), path, ": read error");
  const json::Value value = parse_header(header, path);
  Metadata metadata;
  if (const json::Value* meta = json::find(value, "__metadata__"))
    for (const auto& [k, v] : json::as_object(*meta, path + ": __metadata__"))
      metadata[k] = json::as_string(v, path + ": metadata '" + k + "'");
  return metadata;
}

SafetensorsFile SafetensorsFile::parse(std::string bytes, std::string source) {
  SafetensorsFile file;
  file.source_ = std::move(source);
  file.bytes_ = std::move(bytes);
  const std::string& src = file.source_;
  SEEDRL_REQUIRE(file.bytes_.size() >= 8, src, ": not a safetensors file (", file.bytes_.size(),
                 " bytes, shorter than the 8-byte header length)");
  ByteReader reader(file.bytes_, src);
  const auto header_size = reader.get<std::uint64_t>();
  SEEDRL_REQUIRE(header_size <= kMaxHeaderBytes && header_size <= file.bytes_.size() - 8, src,
                 ": header length ", header_size, " does not fit in the file of ",
                 file.bytes_.size(), " bytes (truncated or not a safetensors file)");
  file.data_offset_ = 8 + static_cast<std::size_t>(header_size);
  const std::size_t data_size = file.bytes_.size() - file.data_offset_;
  const json::Value header =
      parse_header(std::string_view(file.bytes_).substr(8, header_size), src);
  for (const auto& [name, value] : json::as_object(header, src + ": header")) {
    if (name == "__metadata__") {
      for (const auto& [k, v] : json::as_object(value, src + ": __metadata__")) {
        file.metadata_[k] = json::as_string(v, src + ": metadata '" + k + "'");
      }
      continue;
    }
    const std::string what = src + ": tensor '" + name + "'";
    const json::Value* dtype = json::find(value, "dtype");
    const json::Value* shape = json::find(value, "shape");
    const json::Value* offsets = json::find(value, "data_offsets");
    SEEDRL_REQUIRE(dtype && shape && offsets, what, " lacks dtype, shape or data_offsets");
    Entry e;
    e.name = name;
    const std::string& dtype_name = json::as_string(*dtype, what + " dtype");
    SEEDRL_REQUIRE(dtype_from_name(dtype_name, &e.dtype), what, " has dtype ", dtype_name,
                   ", which seedrl does not read (F32, U8, I32)");
    std::vector<std::int64_t> dims;
    std::uint64_t numel = 1;
    for (const json::Value& d : json::as_array(*shape, what + " shape")) {
      const std::uint64_t n = json::as_index(d, what + " shape");
      SEEDRL_REQUIRE(n < (1ull << 40) && (n == 0 || numel <= (1ull << 40) / n), what,
                     " shape is too large");
      numel *= n;
      dims.push_back(static_cast<std::int64_t>(n));
    }
    SEEDRL_REQUIRE(dims.size() <= static_cast<std::size_t>(Shape::kMaxRank), what, " has rank ",
                   dims.size(), ", more than ", Shape::kMaxRank);
    e.shape = Shape(dims);
    const json::Array& range = json::as_array(*offsets, what + " data_offsets");
    SEEDRL_REQUIRE(range.size() == 2, what, " data_offsets must hold two numbers");
    e.begin = json::as_index(range[0], what + " data_offsets");
    e.end = json::as_index(range[1], what + " data_offsets");
    SEEDRL_REQUIRE(e.begin <= e.end && e.end <= data_size, what, " data [", e.begin, ", ", e.end,
                   ") lies outside the ", data_size, " bytes of data (truncated file?)");
    SEEDRL_REQUIRE(e.end - e.begin == numel * size_of(e.dtype), what, " holds ", e.end - e.begin,
                   " bytes but ", dtype_name, e.shape, " needs ", numel * size_of(e.dtype));
    file.entries_.push_back(std::move(e));
  }
  // No two tensors may share bytes.
  std::vector<const Entry*> sorted;
  for (const Entry& e : file.entries_) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(),
            [](const Entry* a, const Entry* b) { return a->begin < b->begin; });
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    SEEDRL_REQUIRE(
        sorted[i]->begin >= sorted[i - 1]->end || sorted[i - 1]->begin == sorted[i - 1]->end, src,
        ": tensors '", sorted[i - 1]->name, "' and '", sorted[i]->name, "' overlap");
  }
  file.verify_checksums();
  return file;
}

void SafetensorsFile::verify_checksums() {
  const auto first = metadata_.lower_bound(std::string(kChecksumKey));
  checksummed_ = first != metadata_.end() && first->first.starts_with(kChecksumKey);
  if (!checksummed_) return;
  const std::string& src = source_;
  auto recorded = [&](const std::string& key, const std::string& what) {
    const auto it = metadata_.find(key);
    SEEDRL_REQUIRE(it != metadata_.end(), src, ": ", what,
                   " has no checksum while the file has others: the file is corrupt");
    return it->second;
  };
  // Every checksum there first, then the header's, then each tensor's.
  const std::string header = recorded(std::string(kChecksumKey), "the header");
  std::vector<std::string> recorded_crcs;
  for (const Entry& e : entries_)
    recorded_crcs.push_back(recorded(tensor_checksum_key(e.name), "tensor '" + e.name + "'"));
  const std::string header_crc = hex32(crc32c(checksum_text(entries_, metadata_)));
  SEEDRL_REQUIRE(header == header_crc, src,
                 ": the header (tensor names, shapes, offsets and metadata) fails its checksum "
                 "(CRC-32C ",
                 header, " recorded, ", header_crc, " computed): the file is corrupt");
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    const std::string& crc = recorded_crcs[i];
    const std::string actual = hex32(crc32c(data_of(e)));
    SEEDRL_REQUIRE(crc == actual, src, ": tensor '", e.name, "' fails its checksum (CRC-32C ", crc,
                   " recorded, ", actual, " computed over bytes [", data_offset_ + e.begin, ", ",
                   data_offset_ + e.end, ") of the file): the file is corrupt");
  }
}

std::int64_t SafetensorsFile::first_non_finite(std::string_view name) const {
  const Entry& e = require(name);
  if (e.dtype != DType::f32) return -1;
  const std::string_view data = data_of(e);
  const std::size_t n = data.size() / sizeof(float);
  for (std::size_t i = 0; i < n; ++i) {
    float v;
    std::memcpy(&v, data.data() + i * sizeof(float), sizeof v);
    if (!std::isfinite(v)) return static_cast<std::int64_t>(i);
  }
  return -1;
}

const SafetensorsFile::Entry* SafetensorsFile::find(std::string_view name) const {
  for (const Entry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

const SafetensorsFile::Entry& SafetensorsFile::require(std::string_view name) const {
  const Entry* e = find(name);
  SEEDRL_REQUIRE(e != nullptr, source_, ": no tensor named '", name, "'");
  return *e;
}

void SafetensorsFile::copy_to(std::string_view name, const Tensor& destination) const {
  const Entry& e = require(name);
  SEEDRL_REQUIRE(
      destination.defined() && destination.dtype() == e.dtype && destination.shape() == e.shape,
      source_, ": tensor '", name, "' is ", seedrl::name(e.dtype), e.shape, " in the file but ",
      destination.defined()
          ? std::string(seedrl::name(destination.dtype())) + destination.shape().to_string()
          : std::string("nothing"),
      " here");
  if (e.end == e.begin) return;  // an empty tensor: nothing to copy (and its pointer may be null)
  const char* src = bytes_.data() + data_offset_ + e.begin;
  if (destination.device() == Device::cpu) {
    std::memcpy(destination.raw_data(), src, e.end - e.begin);
  } else {
    destination.copy_from(Tensor::from_blob(const_cast<char*>(src), e.shape, e.dtype));
  }
}

Tensor SafetensorsFile::tensor(std::string_view name) const {
  const Entry& e = require(name);
  Tensor t = Tensor::empty(e.shape, e.dtype);
  copy_to(name, t);
  return t;
}

}  // namespace seedrl::io
