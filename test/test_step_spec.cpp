// StepSpec and declared step fields where they are kept: the rules a declaration must follow, the
// checkpoint text and its parser, and fields through the unroll store (overlaps included), the
// learner's batch (UnrollBatch::field) and the replay codec (and its older format, without them).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "seedrl/core/binary_io.hpp"
#include "seedrl/core/step_spec.hpp"
#include "seedrl/experience/unroll_codec.hpp"
#include "seedrl/experience/unroll_store.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_step_spec {

using namespace seedrl;

namespace {

const std::vector<StepFieldSpec> kFields = {{"mask", {{3}, DType::u8}},
                                            {"player", {{}, DType::i32}}};

std::string problem(std::vector<StepFieldSpec> fields) {
  return StepSpec::fields_problem(fields);
}

UnrollSpec spec_with_fields(std::int64_t length, std::int64_t overlap) {
  UnrollSpec s;
  s.observation = {{1}, DType::f32};
  s.num_actions = 3;
  s.length = length;
  s.overlap = overlap;
  s.store_behaviour = false;
  s.fields = kFields;
  return s;
}

// Inference's batch of `rows` frames: field values of frame r are mask {r, r + 1, r + 2} and
// player 10 r; a step of frame r is row r of these.
struct FieldBatch {
  std::vector<Tensor> fields = {Tensor::empty({4, 3}, DType::u8), Tensor::empty({4}, DType::i32)};
  Tensor obs = Tensor::empty({1});
  std::int32_t action = 0;
  void fill(int base) {
    for (int r = 0; r < 4; ++r) {
      for (int j = 0; j < 3; ++j)
        fields[0].data<std::uint8_t>()[3 * r + j] = static_cast<std::uint8_t>(base + r + j);
      fields[1].data<std::int32_t>()[r] = 10 * (base + r);
    }
  }
  UnrollStep step(int k, std::int64_t row) {
    obs.data<float>()[0] = static_cast<float>(k);
    UnrollStep s;
    s.observation = obs;
    s.flags = k == 0 ? step_flags::kFirst : 0;
    s.set_action(&action);
    s.fields = fields;
    s.field_row = row;
    return s;
  }
};

}  // namespace

TEST_CASE("StepSpec: a declaration is refused by name where it breaks a rule") {
  CHECK(problem(kFields).empty());
  CHECK(problem({}).empty());
  CHECK(problem({{"a1_b", {{1, 2, 3, 4}, DType::f32}}}).empty());
  CHECK(problem({{"Mask", {{3}, DType::u8}}}).find("step field 0 is named 'Mask'") == 0);
  CHECK(problem({{"1mask", {{3}, DType::u8}}}).find("is named '1mask'") != std::string::npos);
  CHECK(problem({{std::string(33, 'm'), {{3}, DType::u8}}}).find("1 to 32 characters") !=
        std::string::npos);
  CHECK(problem({{"flags", {{}, DType::u8}}}).find("step field 'flags' has the name of a part") ==
        0);
  CHECK(problem({{"m", {{}, DType::u8}}, {"m", {{2}, DType::u8}}}) ==
        "step field 'm' is declared twice");
  CHECK(problem({{"m", {{1, 1, 1, 1, 1}, DType::u8}}}) == "step field 'm' has rank 5; at most 4");
  CHECK(problem({{"m", {{0}, DType::u8}}}).find("every dimension at least 1") != std::string::npos);
  // A size whose bytes would overflow if multiplied blindly is refused, not wrapped; a shape
  // whose elements overflow 64 bits cannot be made at all.
  CHECK(problem({{"m", {{1 << 20, 1 << 20, 1 << 20}, DType::f32}}})
            .find("more than 1048576 bytes per step") != std::string::npos);
  CHECK_THROWS_WITH_AS(Shape({1 << 20, 1 << 20, 1 << 20, 1 << 20}),
                       doctest::Contains("overflow 64 bits"), Error);
  CHECK(problem({{"m", {{262144}, DType::f32}}}).empty());  // exactly 1 MiB
  std::vector<StepFieldSpec> nine;
  for (int i = 0; i < 9; ++i) nine.push_back({str_cat("f", i), {{}, DType::f32}});
  CHECK(problem(nine) == "9 step fields are declared; at most 8 are allowed");

  const StepSpec spec{{{4}, DType::f32}, {2}, kFields};
  CHECK(spec.field_index("player") == 1);
  CHECK(spec.field_index("goal") == -1);
  CHECK(spec.to_string() ==
        "observation f32[4], 2 discrete actions, fields: mask u8[3], player i32[]");
  CHECK_THROWS_WITH_AS(
      StepSpec({{{4}, DType::f32}, {2}, {{"Mask", {{3}, DType::u8}}}}).validate("MyEnv"),
      doctest::Contains("MyEnv: step field 0 is named 'Mask'"), Error);
  CHECK_THROWS_WITH_AS(StepSpec({{{4}, DType::f32}, {0}, {}}).validate("MyEnv"),
                       doctest::Contains("MyEnv: an action spec is N > 0 discrete actions"), Error);
}

TEST_CASE("StepSpec: the fields' exact text round-trips; a broken text is refused by name") {
  const std::string text = StepSpec::fields_to_text(kFields);
  CHECK(text == "mask u8 3;player i32");
  CHECK(StepSpec::parse_fields(text, "ckpt") == kFields);
  CHECK(StepSpec::parse_fields("", "ckpt").empty());
  const std::vector<StepFieldSpec> high = {{"board", {{2, 6, 7}, DType::f32}}};
  CHECK(StepSpec::parse_fields(StepSpec::fields_to_text(high), "ckpt") == high);
  for (const char* bad : {"mask", "mask u16 3", "mask u8 x", "mask u8 0", "mask u8 3;", "Mask u8 3",
                          "mask u8 3;mask i32", "m u8 1 1 1 1 1"}) {
    CAPTURE(bad);
    const std::string expected = str_cat("ckpt: step fields '", bad, "' are not valid");
    CHECK_THROWS_WITH_AS(StepSpec::parse_fields(bad, "ckpt"), doctest::Contains(expected.c_str()),
                         Error);
  }
}

TEST_CASE("UnrollStore and UnrollBatch: declared fields are kept per step and read by name") {
  UnrollStore store(2, spec_with_fields(3, 1));
  FieldBatch batch;
  std::vector<std::unique_ptr<Unroll>> done;
  // Slot 0 takes its steps from row 1 of each batch, slot 1 from row 3.
  for (int k = 0; k < 5; ++k) {
    batch.fill(k);
    for (int slot : {0, 1}) {
      if (auto u = store.append(slot, batch.step(k, slot == 0 ? 1 : 3)))
        done.push_back(std::move(u));
    }
  }
  REQUIRE(done.size() == 4);  // steps 0-2 and 2-4 of each slot
  const Unroll& first = *done[0];
  REQUIRE(first.fields.size() == 2);
  CHECK(first.fields[0].shape() == Shape{3, 3});
  CHECK(first.fields[1].shape() == Shape{3});
  for (int t = 0; t < 3; ++t) {
    CAPTURE(t);
    CHECK(first.fields[0][t].data<std::uint8_t>()[0] == t + 1);  // base k = t, row 1
    CHECK(first.fields[0][t].data<std::uint8_t>()[2] == t + 3);
    CHECK(first.fields[1].data<std::int32_t>()[t] == 10 * (t + 1));
  }
  // The overlapping step (k = 2) opens the next unroll with its fields.
  CHECK(done[2]->fields[1].data<std::int32_t>()[0] == 10 * (2 + 1));
  CHECK(done[2]->fields[1].data<std::int32_t>()[2] == 10 * (4 + 1));
  CHECK(done[3]->fields[1].data<std::int32_t>()[1] == 10 * (3 + 3));

  UnrollBatch stacked;
  stacked.stack(done, store.spec());
  const Tensor& player = stacked.field("player");
  CHECK(player.shape() == Shape{3, 4});
  CHECK(stacked.field("mask").shape() == Shape{3, 4, 3});
  for (std::int64_t t = 0; t < 3; ++t) {
    for (std::int64_t b = 0; b < 4; ++b) {
      CAPTURE(t);
      CAPTURE(b);
      CHECK(player.data<std::int32_t>()[t * 4 + b] ==
            done[static_cast<std::size_t>(b)]->fields[1].data<std::int32_t>()[t]);
      CHECK(stacked.field("mask")[t][b].data<std::uint8_t>()[1] ==
            done[static_cast<std::size_t>(b)]->fields[0][t].data<std::uint8_t>()[1]);
    }
  }
  CHECK_THROWS_WITH_AS(stacked.field("goal"),
                       doctest::Contains("no step field 'goal' (the steps declare mask, player)"),
                       Error);
  CHECK(store.spec().field_index("player", "test") == 1);
  CHECK_THROWS_WITH_AS(store.spec().field_index("goal", "test"),
                       doctest::Contains("test: no step field 'goal'"), Error);

  // A step without the declared fields, or with rows of another size, is refused.
  UnrollStep bare = batch.step(5, 0);
  bare.fields = {};
  CHECK_THROWS_WITH_AS(store.append(0, bare), doctest::Contains("the step has 0 fields"), Error);
  std::vector<Tensor> wrong = {Tensor::empty({4, 2}, DType::u8), Tensor::empty({4}, DType::i32)};
  UnrollStep narrow = batch.step(5, 0);
  narrow.fields = wrong;
  CHECK_THROWS_WITH_AS(store.append(0, narrow), doctest::Contains("field 'mask' has rows of 2"),
                       Error);
}

TEST_CASE("ReplayItemCodec<Unroll>: fields round-trip; a state written before fields still reads") {
  UnrollStore store(1, spec_with_fields(3, 1));
  FieldBatch batch;
  std::unique_ptr<Unroll> u;
  for (int k = 0; k < 3 && !u; ++k) {
    batch.fill(k);
    u = store.append(0, batch.step(k, 2));
  }
  REQUIRE(u != nullptr);
  CHECK(matches(*u, store.spec()));
  UnrollSpec without = store.spec();
  without.fields.clear();
  CHECK_FALSE(matches(*u, without));

  ByteWriter w;
  ReplayItemCodec<Unroll>::write(w, *u);
  const std::string bytes = w.data();
  ByteReader r(std::span<const char>(bytes.data(), bytes.size()), "state.bin");
  const Unroll back = ReplayItemCodec<Unroll>::read(r);
  CHECK(r.remaining() == 0);
  CHECK(matches(back, store.spec()));
  CHECK(back.fields[1].data<std::int32_t>()[2] == 10 * (2 + 2));
  CHECK(back.fields[0][1].data<std::uint8_t>()[0] == 1 + 2);
  for (std::size_t n = 0; n < bytes.size(); n += 5) {
    ByteReader cut(std::span<const char>(bytes.data(), n), "state.bin");
    CHECK_THROWS_WITH_AS(ReplayItemCodec<Unroll>::read(cut), doctest::Contains("state.bin"), Error);
  }
  std::string many = bytes;
  many[1] = 9;  // more fields than a step may declare
  ByteReader corrupt(std::span<const char>(many.data(), many.size()), "state.bin");
  CHECK_THROWS_WITH_AS(ReplayItemCodec<Unroll>::read(corrupt),
                       doctest::Contains("an unroll with 9 step fields"), Error);

  // The layout before step fields: the tensors and the slot, with no leading marker.
  ByteWriter old;
  for (const Tensor* t : {&u->observations, &u->rewards, &u->flags, &u->actions, &u->behaviour,
                          &u->policy_versions, &u->initial_state.h, &u->initial_state.c})
    detail::write_tensor(old, *t);
  old.put<std::int32_t>(u->slot);
  const std::string old_bytes = old.data();
  ByteReader old_reader(std::span<const char>(old_bytes.data(), old_bytes.size()), "old.bin");
  const Unroll old_back = ReplayItemCodec<Unroll>::read(old_reader);
  CHECK(old_reader.remaining() == 0);
  CHECK(old_back.fields.empty());
  CHECK(matches(old_back, without));
  CHECK(old_back.observations[2].data<float>()[0] == 2.0f);
}

}  // namespace test_step_spec
