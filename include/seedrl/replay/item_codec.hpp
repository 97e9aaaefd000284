// ReplayItemCodec<Item>: how a replay item is written to and read from a saved replay state.
//
// Specialise it for your item type with
//   static void write(ByteWriter&, const Item&);
//   static Item read(ByteReader&);        // throws seedrl::Error on malformed data
// Provided: trivially copyable types, std::string, and std::vector of trivially copyable types.
//
//   static_assert(seedrl::ReplaySerializable<std::vector<float>>);
#pragma once

#include <concepts>
#include <string>
#include <type_traits>
#include <vector>

#include "seedrl/core/binary_io.hpp"

namespace seedrl {

template <class Item>
struct ReplayItemCodec;

template <class Item>
concept ReplaySerializable = requires(const Item& item, ByteWriter& writer, ByteReader& reader) {
  ReplayItemCodec<Item>::write(writer, item);
  { ReplayItemCodec<Item>::read(reader) } -> std::same_as<Item>;
};

/// Trivially copyable items: their bytes, length-prefixed (so a size change is detected).
template <class Item>
requires std::is_trivially_copyable_v<Item>
struct ReplayItemCodec<Item> {
  static void write(ByteWriter& w, const Item& item) {
    w.blob(std::string_view(reinterpret_cast<const char*>(&item), sizeof(Item)));
  }
  static Item read(ByteReader& r) {
    const std::string_view bytes = r.blob();
    SEEDRL_REQUIRE(bytes.size() == sizeof(Item), r.source(), ": replay item of ", bytes.size(),
                   " bytes, expected ", sizeof(Item));
    Item item;
    std::memcpy(&item, bytes.data(), sizeof(Item));
    return item;
  }
};

template <>
struct ReplayItemCodec<std::string> {
  static void write(ByteWriter& w, const std::string& item) { w.blob(item); }
  static std::string read(ByteReader& r) { return std::string(r.blob()); }
};

template <class T>
requires std::is_trivially_copyable_v<T>
struct ReplayItemCodec<std::vector<T>> {
  static void write(ByteWriter& w, const std::vector<T>& item) {
    w.blob(std::string_view(reinterpret_cast<const char*>(item.data()), item.size() * sizeof(T)));
  }
  static std::vector<T> read(ByteReader& r) {
    const std::string_view bytes = r.blob();
    SEEDRL_REQUIRE(bytes.size() % sizeof(T) == 0, r.source(), ": replay item of ", bytes.size(),
                   " bytes is not a whole number of ", sizeof(T), "-byte elements");
    std::vector<T> item(bytes.size() / sizeof(T));
    std::memcpy(item.data(), bytes.data(), bytes.size());
    return item;
  }
};

}  // namespace seedrl
