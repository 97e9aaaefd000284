// Action branches (issue 36): the action spec of K discrete branches (text, validation), the
// network that knows them (description, the branching dueling head against a naive loop and
// finite differences), the policy terms of one categorical per branch against a float64
// reference and finite differences, the batch helpers (ranges per branch, masks per branch),
// acting per branch (greedy, sampling, epsilon among the legal actions of each branch), and the
// Gunner game's rules.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "seedrl/agent/acting.hpp"
#include "seedrl/agents/r2d2.hpp"
#include "seedrl/agents/vtrace.hpp"
#include "seedrl/backend/cpu/backend.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/env/gunner.hpp"
#include "seedrl/learner/policy_terms.hpp"
#include "seedrl/learner/transitions.hpp"
#include "seedrl/nn/description.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_action_branches {

using namespace seedrl;

TEST_CASE("ActionSpec: branches, their text both ways, and bad branches named") {
  const ActionSpec spec = ActionSpec::branched({3, 2});
  CHECK(spec.is_branched());
  CHECK_FALSE(spec.is_box());
  CHECK(spec.num_actions == 5);
  CHECK(spec.dims() == 2);
  CHECK(spec.branch_sizes() == std::vector<std::int64_t>{3, 2});
  CHECK(spec.to_string() == "branches 3 x 2 (5 discrete actions)");
  CHECK(spec.to_text() == "branches 2 3 2");
  CHECK(ActionSpec::parse(spec.to_text(), "ckpt") == spec);
  CHECK(ActionSpec::branched({6}) == ActionSpec{6});  // one branch is a discrete action
  CHECK(ActionSpec{6}.branch_sizes() == std::vector<std::int64_t>{6});
  CHECK(math::branches_of(spec) == math::Branches({3, 2}));
  spec.validate("env");

  ActionSpec empty_branch = ActionSpec::branched({3, 0});
  CHECK_THROWS_WITH_AS(empty_branch.validate("env"),
                       doctest::Contains("env: action branch 1 has 0 actions"), Error);
  ActionSpec wrong_total = spec;
  wrong_total.num_actions = 6;
  CHECK_THROWS_WITH_AS(wrong_total.validate("env"),
                       doctest::Contains("branches of 5 actions in all, but num_actions is 6"),
                       Error);
  const ActionSpec too_many =
      ActionSpec::branched(std::vector<std::int32_t>(ActionSpec::kMaxBranches + 1, 2));
  CHECK_THROWS_WITH_AS(too_many.validate("env"), doctest::Contains("2 to 64"), Error);
  CHECK_THROWS_WITH_AS(ActionSpec::parse("branches 1 4", "ckpt"),
                       doctest::Contains("branches need 2 to 64 branches"), Error);
  CHECK_THROWS_WITH_AS(ActionSpec::parse("branches 2 4", "ckpt"),
                       doctest::Contains("expected a number"), Error);
  CHECK_THROWS_WITH_AS(ActionSpec::parse("branches 2 4 -1", "ckpt"),
                       doctest::Contains("action branch 1 has -1 actions"), Error);
  // A mask is u8 [num_actions]: the branches side by side.
  StepSpec step{{{4}}, spec, {{kActionMaskField, {{5}, DType::u8}}}};
  CHECK(step.action_mask_index("env") == 0);
  step.fields[0].spec.shape = {3};
  CHECK_THROWS_WITH_AS(step.validate("env"), doctest::Contains("u8[5] for branches 3 x 2"), Error);
}

TEST_CASE("NetworkOptions: branches in the description, checked against the actions") {
  nn::NetworkOptions net = nn::NetworkOptions::mlp(16, 0, {8}).branches({3, 2});
  CHECK(net.num_actions == 5);
  net.q_head = true;
  net.dueling = true;
  net.policy_value_heads = false;
  const std::string text = nn::describe(net);
  CHECK(text.find("branches [3,2]") != std::string::npos);
  const nn::NetworkOptions back = nn::parse_description(text, "ckpt");
  CHECK(back.action_branches == net.action_branches);
  CHECK(nn::describe(back) == text);
  net.require_branches_of(ActionSpec::branched({3, 2}), "server");
  CHECK_THROWS_WITH_AS(net.require_branches_of(ActionSpec{5}, "server"),
                       doctest::Contains("server: actions 5 discrete actions but the network has "
                                         "2 action branches"),
                       Error);
  const nn::NetworkOptions plain = nn::NetworkOptions::mlp(16, 5);
  CHECK_THROWS_WITH_AS(plain.require_branches_of(ActionSpec::branched({3, 2}), "server"),
                       doctest::Contains("has no action branches (NetworkOptions::branches)"),
                       Error);
  nn::NetworkOptions bad = net;
  bad.action_branches = {3, 3};
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("summing to num_actions (5)"), Error);
  CHECK_THROWS_WITH_AS(nn::parse_description("mlp observation [16] actions 5 lstm 0 hidden [8] "
                                             "branches [3,3]",
                                             "ckpt"),
                       doctest::Contains("ckpt"), Error);
}

TEST_CASE("dueling head with branches: each branch centred alone, against a loop and differences") {
  Rng rng(5);
  const std::vector<std::int64_t> branches{3, 2, 4};
  const std::int64_t n = 4, a = 9;
  Tensor value = Tensor::empty({n, 1}), advantage = Tensor::empty({n, a}),
         q = Tensor::empty({n, a});
  for (std::int64_t i = 0; i < n; ++i) value.data<float>()[i] = static_cast<float>(rng.normal());
  for (std::int64_t i = 0; i < n * a; ++i)
    advantage.data<float>()[i] = static_cast<float>(rng.normal());
  cpu::Backend::dueling_forward(value, advantage, q, branches);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t offset = 0;
    for (std::int64_t size : branches) {
      double mean = 0.0;
      for (std::int64_t j = offset; j < offset + size; ++j)
        mean += advantage.data<float>()[i * a + j];
      mean /= static_cast<double>(size);
      for (std::int64_t j = offset; j < offset + size; ++j)
        CHECK(q.data<float>()[i * a + j] ==
              doctest::Approx(value.data<float>()[i] + advantage.data<float>()[i * a + j] - mean)
                  .epsilon(1e-5));
      offset += size;
    }
  }
  // Backward: the gradient of sum(g * q) w.r.t. value and advantage, by central differences.
  Tensor g = Tensor::empty({n, a}), grad_value = Tensor::empty({n, 1}),
         grad_advantage = Tensor::empty({n, a});
  for (std::int64_t i = 0; i < n * a; ++i) g.data<float>()[i] = static_cast<float>(rng.normal());
  cpu::Backend::dueling_backward(g, grad_value, grad_advantage, branches);
  auto objective = [&] {
    cpu::Backend::dueling_forward(value, advantage, q, branches);
    double total = 0.0;
    for (std::int64_t i = 0; i < n * a; ++i)
      total += static_cast<double>(g.data<float>()[i]) * q.data<float>()[i];
    return total;
  };
  for (const auto& [input, grad] : {std::pair{value, grad_value}, {advantage, grad_advantage}}) {
    for (std::int64_t i = 0; i < input.numel(); ++i) {
      float& x = input.data<float>()[i];
      const float saved = x;
      x = saved + 1e-2f;
      const double up = objective();
      x = saved - 1e-2f;
      const double down = objective();
      x = saved;
      CHECK(grad.data<float>()[i] == doctest::Approx((up - down) / 2e-2).epsilon(1e-2));
    }
  }
  // Without branches it is the plain dueling head (one mean over all actions).
  cpu::Backend::dueling_forward(value, advantage, q, std::vector<std::int64_t>{a});
  const Tensor plain = Tensor::empty({n, a});
  cpu::Backend::dueling_forward(value, advantage, plain);
  CHECK((q.matrix<float>() - plain.matrix<float>()).cwiseAbs().maxCoeff() == 0.0f);
}

TEST_CASE("policy_terms with branches: sums of per-branch masked softmaxes, and their gradients") {
  Rng rng(9);
  const math::Branches branches({3, 2});
  const std::int64_t m = 6, a = 5;
  Tensor logits = Tensor::empty({1, m, a}), actions = Tensor::empty({m, 2}, DType::i32);
  std::vector<std::uint8_t> legal(static_cast<std::size_t>(m * a), 1);
  for (std::int64_t i = 0; i < m * a; ++i)
    logits.data<float>()[i] = static_cast<float>(rng.uniform(-2, 2));
  for (std::int64_t i = 0; i < m; ++i) {
    actions.data<std::int32_t>()[2 * i] = static_cast<std::int32_t>(rng.below(3));
    actions.data<std::int32_t>()[2 * i + 1] = static_cast<std::int32_t>(rng.below(2));
    if (i % 2 == 1) {  // odd rows: one illegal action in branch 0, never the one taken
      const std::int32_t taken = actions.data<std::int32_t>()[2 * i];
      legal[static_cast<std::size_t>(i * a + (taken + 1) % 3)] = 0;
    }
  }
  auto reference = [&](std::int64_t i, bool entropy) {  // float64, from the definition
    double log_prob = 0.0, h = 0.0;
    std::int64_t offset = 0;
    for (std::int64_t k = 0; k < 2; ++k) {
      const std::int64_t size = branches.size(k);
      double total = 0.0;
      for (std::int64_t j = offset; j < offset + size; ++j)
        if (legal[static_cast<std::size_t>(i * a + j)])
          total += std::exp(static_cast<double>(logits.data<float>()[i * a + j]));
      for (std::int64_t j = offset; j < offset + size; ++j) {
        if (!legal[static_cast<std::size_t>(i * a + j)]) continue;
        const double lp = logits.data<float>()[i * a + j] - std::log(total);
        h -= std::exp(lp) * lp;
        if (j - offset == actions.data<std::int32_t>()[2 * i + k]) log_prob += lp;
      }
      offset += size;
    }
    return entropy ? h : log_prob;
  };
  const PolicyTerms terms = policy_terms(logits, Tensor(), actions, legal, branches);
  for (std::int64_t i = 0; i < m; ++i) {
    CHECK(terms.log_probs(i) == doctest::Approx(reference(i, false)).epsilon(1e-5));
    CHECK(terms.entropy(i) == doctest::Approx(reference(i, true)).epsilon(1e-5));
  }
  // Unmasked, the same sums over all of each branch.
  const PolicyTerms open = policy_terms(logits, Tensor(), actions, {}, branches);
  CHECK(open.log_probs(0) == doctest::Approx(terms.log_probs(0)).epsilon(1e-6));
  CHECK(open.log_probs(1) != doctest::Approx(terms.log_probs(1)));
  // Gradients of sum(g_lp log pi + g_ent H) by central differences; illegal logits get none.
  Eigen::ArrayXf g_lp(m), g_ent(m);
  for (std::int64_t i = 0; i < m; ++i) {
    g_lp(i) = static_cast<float>(rng.uniform(-1, 1));
    g_ent(i) = static_cast<float>(rng.uniform(-1, 1));
  }
  const Tensor grad = Tensor::empty({1, m, a});
  policy_terms_backward(logits, Tensor(), actions, g_lp, g_ent, grad, Tensor(), legal, branches);
  for (std::int64_t i = 0; i < m * a; ++i) {
    float& x = logits.data<float>()[i];
    const float saved = x;
    auto objective = [&] {
      const PolicyTerms t = policy_terms(logits, Tensor(), actions, legal, branches);
      return static_cast<double>((g_lp * t.log_probs + g_ent * t.entropy).sum());
    };
    x = saved + 1e-2f;
    const double up = objective();
    x = saved - 1e-2f;
    const double down = objective();
    x = saved;
    CHECK(grad.data<float>()[i] == doctest::Approx((up - down) / 2e-2).epsilon(2e-2).scale(1e-3));
    if (!legal[static_cast<std::size_t>(i)]) CHECK(grad.data<float>()[i] == 0.0f);
  }
}

TEST_CASE("batches with branches: actions checked per branch, masks filled per branch") {
  UnrollSpec spec;
  spec.observation = {{1}};
  spec.num_actions = 5;
  spec.action_spec = ActionSpec::branched({3, 2});
  spec.length = 3;
  spec.fields = {{kActionMaskField, {{5}, DType::u8}}};
  CHECK(spec.action_shape() == Shape{2});
  CHECK(unroll_branches(spec) == math::Branches({3, 2}));
  std::vector<std::unique_ptr<Unroll>> unrolls;
  for (int j = 0; j < 2; ++j) {
    unrolls.push_back(Unroll::allocate(spec));
    Unroll& u = *unrolls.back();
    u.flags.fill_zero();
    u.rewards.fill_zero();
    u.policy_versions.fill_zero();
    u.observations.fill_zero();
    for (std::int64_t t = 0; t < 3; ++t) {
      u.actions.data<std::int32_t>()[2 * t] = static_cast<std::int32_t>((t + j) % 3);
      u.actions.data<std::int32_t>()[2 * t + 1] = static_cast<std::int32_t>(t % 2);
    }
    // Step 2 of unroll 1 allows nothing in branch 1 (an episode's last step): it allows all.
    std::uint8_t* m = u.fields[0].data<std::uint8_t>();
    for (int i = 0; i < 15; ++i) m[i] = static_cast<std::uint8_t>(i % 5 != 4);
    if (j == 1) m[2 * 5 + 3] = 0;
  }
  UnrollBatch batch;
  batch.stack(unrolls, spec);
  CHECK(batch.actions.shape() == Shape{3, 2, 2});
  CHECK(branch_actions(batch, 1, 2, 0)(0, 1) == 2);  // step 1 of unroll 1, branch 0
  CHECK(branch_actions(batch, 0, 3, 1)(1, 0) == 1);
  check_actions(batch, spec, "learner");
  const std::vector<std::uint8_t> legal = legal_actions(batch, unroll_branches(spec));
  // Frame t * B + b = 2 * 2 + 1 = 5: branch 1 (columns 3, 4) was all false, now all true.
  CHECK(legal[5 * 5 + 3] == 1);
  CHECK(legal[5 * 5 + 4] == 1);
  CHECK(legal[4 * 5 + 4] == 0);               // other rows keep their masks
  batch.actions.data<std::int32_t>()[3] = 2;  // branch 1 has 2 actions
  CHECK_THROWS_WITH_AS(check_actions(batch, spec, "learner"),
                       doctest::Contains("stored action 2 of branch 1 out of range [0, 2)"), Error);
}

TEST_CASE("acting with branches: greedy, sampling and epsilon choose per branch, legal only") {
  const math::Branches branches({3, 2});
  // Two rows; row 1 forbids the best action of branch 0 and action 0 of branch 1.
  const Tensor scores = Tensor::empty({2, 5});
  const float values[] = {0.1f, 2.0f, 0.3f, 1.0f, -1.0f, 0.1f, 2.0f, 0.3f, 1.0f, -1.0f};
  std::copy(values, values + 10, scores.data<float>());
  const std::vector<std::uint8_t> mask{1, 1, 1, 1, 1, 1, 0, 1, 0, 1};
  Rng rng(1);
  std::vector<std::int32_t> actions(4);
  select_actions(scores, {ActionMode::greedy}, rng, actions, {}, branches);
  CHECK(actions == std::vector<std::int32_t>{1, 0, 1, 0});
  select_actions(scores, {ActionMode::greedy}, rng, actions, mask, branches);
  CHECK(actions == std::vector<std::int32_t>{1, 0, 2, 1});
  std::vector<std::int32_t> one(2);
  CHECK_THROWS_WITH_AS(select_actions(scores, {ActionMode::greedy}, rng, one, {}, branches),
                       doctest::Contains("for 2 actions"), Error);
  // Epsilon 1: uniform among each branch's legal actions; over many draws every legal one shows.
  int counts[5] = {};
  for (int i = 0; i < 2000; ++i) {
    select_actions(scores, {ActionMode::epsilon_greedy, 1.0}, rng, actions, mask, branches);
    CHECK(actions[2] != 1);
    CHECK(actions[3] == 1);
    ++counts[actions[0]];
    ++counts[3 + actions[1]];
  }
  for (int c : counts) CHECK(c > 400);
  // The agents' inference: V-trace samples per branch, R2D2 explores per branch.
  nn::NetworkOutputs out;
  out.logits = scores.reshape({1, 2, 5});
  out.q = out.logits;
  const std::vector<std::int32_t> slots{0, 1};
  const std::vector<std::uint8_t> evaluation{0, 0};
  const ActingContext context{mask, branches};
  VTraceAgentOptions vo;
  vo.network = nn::NetworkOptions::mlp(4, 5).branches({3, 2});
  const VTraceAgent vtrace(vo);
  R2D2AgentOptions ro;
  ro.network = nn::NetworkOptions::mlp(4, 5).branches({3, 2});
  ro.network.policy_value_heads = false;
  ro.network.q_head = true;
  ro.epsilon_base = 1.0;
  const R2D2Agent r2d2(ro);
  for (int i = 0; i < 200; ++i) {
    seedrl::select_actions(vtrace, out, slots, evaluation, actions, rng, context);
    CHECK(actions[2] != 1);
    CHECK(actions[3] == 1);
    seedrl::select_actions(r2d2, out, slots, evaluation, actions, rng, context);
    CHECK(actions[2] != 1);
    CHECK(actions[3] == 1);
    CHECK((actions[0] >= 0 && actions[0] < 3 && actions[1] >= 0 && actions[1] < 2));
  }
}

TEST_CASE("Gunner: moves, shots, reloading, the mask per branch and illegal actions") {
  const Tensor observation = Tensor::zeros({16});
  const std::vector<Tensor> fields{Tensor::zeros({1, 5}, DType::u8)};
  Gunner game(3);
  const std::vector<StepFieldSpec> specs = game.step_fields();
  const StepRow row(observation, specs, fields, 0);
  game.reset(row);
  const std::uint8_t* mask = fields[0].data<std::uint8_t>();
  auto step = [&](std::int32_t move, std::int32_t fire) {
    const std::int32_t a[] = {move, fire};
    return game.step(a, row);
  };
  // Walk to cell 0: left is illegal there, and costs -1 without moving.
  while (game.gun() > 0) step(Gunner::kLeft, Gunner::kHold);
  CHECK(mask[Gunner::kLeft] == 0);
  CHECK(mask[Gunner::kRight] == 1);
  CHECK(observation.data<float>()[0] == 1.0f);
  StepResult r = step(Gunner::kLeft, Gunner::kHold);
  CHECK(r.reward == -1.0f);
  CHECK(game.gun() == 0);
  CHECK(game.illegal_actions() == 1);
  // Chase and fire: a hit scores 1; the next step reloads (fire masked, firing illegal).
  for (int i = 0; i < 20 && game.hits() == 0; ++i) {
    const std::vector<std::int32_t> a = game.chase();
    r = step(a[0], a[1]);
  }
  REQUIRE(game.hits() == 1);
  CHECK(r.reward == 1.0f);
  CHECK(game.reloading());
  CHECK(mask[3 + Gunner::kFire] == 0);
  CHECK(observation.data<float>()[14] == 1.0f);
  const std::int64_t illegal = game.illegal_actions();
  r = step(Gunner::kStay, Gunner::kFire);
  CHECK(r.reward == -1.0f);
  CHECK(game.illegal_actions() == illegal + 1);
  CHECK_FALSE(game.reloading());
  const std::int32_t bad[] = {3, 0};
  CHECK_THROWS_WITH_AS(game.step(bad, row), doctest::Contains("a move in [0, 3)"), Error);
  CHECK_THROWS_WITH_AS(Gunner(0, {.width = 1}), doctest::Contains("width must be in [2, 64]"),
                       Error);

  // The references docs/results.md states: the chaser's and a random legal player's returns.
  double chase = 0.0, random = 0.0;
  Rng rng(7);
  for (int e = 0; e < 200; ++e) {
    for (const bool expert : {true, false}) {
      Gunner g(1000 + static_cast<std::uint64_t>(e));
      g.reset(row);
      for (bool over = false; !over;) {
        std::vector<std::int32_t> a = g.chase();
        if (!expert) {
          do a[0] = static_cast<std::int32_t>(rng.below(3));
          while (!mask[a[0]]);
          a[1] = mask[4] ? static_cast<std::int32_t>(rng.below(2)) : 0;
        }
        const StepResult s = g.step(a, row);
        (expert ? chase : random) += s.reward;
        over = s.truncated;
      }
      if (expert) CHECK(g.illegal_actions() == 0);
    }
  }
  MESSAGE("Gunner over 200 episodes: the chaser scores ", chase / 200, ", a random legal player ",
          random / 200);
  CHECK(chase / 200 > 11.0);
  CHECK(random / 200 < 1.0);
}

}  // namespace test_action_branches
