// Policy terms: log-probabilities, entropies and their gradients for discrete and box actions
// against finite differences and a float64 Gaussian; the behaviour log-probabilities of a batch;
// the distribution-agnostic actor-critic loss against the softmax one; with legal-action masks,
// against a float64 softmax over the legal actions and finite differences, and the masks a batch's
// steps carry.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "seedrl/algo/actor_critic_loss.hpp"
#include "seedrl/core/random.hpp"
#include "seedrl/core/step_spec.hpp"
#include "seedrl/learner/policy_terms.hpp"
#include "seedrl/learner/transitions.hpp"
#include "seedrl/nn/network.hpp"

// Everything in a namespace of this file: the tests are compiled in unity batches.
namespace test_policy_terms {

using namespace seedrl;

TEST_CASE("policy_terms_backward: the gradients of log-prob and entropy match finite differences") {
  Rng rng(3);
  for (const bool box : {false, true}) {
    CAPTURE(box);
    const std::int64_t m = 3, k = box ? 2 : 4;
    nn::NetworkOutputs out;
    Tensor actions;
    if (box) {
      out.mean = Tensor::empty({1, m, k});
      out.log_std = Tensor::empty({1, m, k});
      actions = Tensor::empty({m, k});
      for (std::int64_t i = 0; i < m * k; ++i) {
        out.mean.data<float>()[i] = static_cast<float>(rng.uniform(-1, 1));
        out.log_std.data<float>()[i] = static_cast<float>(rng.uniform(-1, 0.5));
        actions.data<float>()[i] = static_cast<float>(rng.normal());
      }
    } else {
      out.logits = Tensor::empty({1, m, k});
      actions = Tensor::empty({m}, DType::i32);
      for (std::int64_t i = 0; i < m * k; ++i)
        out.logits.data<float>()[i] = static_cast<float>(rng.uniform(-2, 2));
      for (std::int64_t i = 0; i < m; ++i)
        actions.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.below(4));
    }
    Eigen::ArrayXf g_lp(m), g_ent(m);
    for (std::int64_t i = 0; i < m; ++i) {
      g_lp(i) = static_cast<float>(rng.uniform(-1, 1));
      g_ent(i) = static_cast<float>(rng.uniform(-1, 1));
    }
    auto objective = [&] {
      const PolicyTerms terms = policy_terms(box ? out.mean : out.logits, out.log_std, actions);
      return static_cast<double>((g_lp * terms.log_probs + g_ent * terms.entropy).sum());
    };
    const Tensor grad_policy = Tensor::empty({1, m, k});
    const Tensor grad_log_std = box ? Tensor::empty({1, m, k}) : Tensor();
    policy_terms_backward(box ? out.mean : out.logits, out.log_std, actions, g_lp, g_ent,
                          grad_policy, grad_log_std);
    const Tensor inputs[2] = {box ? out.mean : out.logits, out.log_std};
    const Tensor grads[2] = {grad_policy, grad_log_std};
    for (int which = 0; which < (box ? 2 : 1); ++which) {
      const Tensor& input = inputs[which];
      const Tensor& grad = grads[which];
      for (std::int64_t i = 0; i < m * k; ++i) {
        float& x = input.data<float>()[i];
        const float saved = x;
        const float h = 1e-2f;
        x = saved + h;
        const double up = objective();
        x = saved - h;
        const double down = objective();
        x = saved;
        CHECK(grad.data<float>()[i] == doctest::Approx((up - down) / (2.0 * h)).epsilon(2e-2));
      }
    }
  }
}

TEST_CASE("behaviour_log_probs: the recorded logits give log softmax of the action taken") {
  UnrollBatch batch;
  batch.flags = Tensor::zeros({3, 2}, DType::u8);
  batch.behaviour = Tensor::empty({3, 2, 3});
  batch.actions = Tensor::empty({3, 2}, DType::i32);
  Rng rng(2);
  for (std::int64_t i = 0; i < 18; ++i)
    batch.behaviour.data<float>()[i] = static_cast<float>(rng.uniform(-2, 2));
  for (std::int64_t i = 0; i < 6; ++i)
    batch.actions.data<std::int32_t>()[i] = static_cast<std::int32_t>(i % 3);
  const Eigen::ArrayXf lp = behaviour_log_probs(batch, 2);
  REQUIRE(lp.size() == 4);  // the first two steps of two columns
  for (int row = 0; row < 4; ++row) {
    const float* l = batch.behaviour.data<float>() + row * 3;
    double z = 0.0;
    for (int j = 0; j < 3; ++j) z += std::exp(static_cast<double>(l[j]));
    CHECK(lp(row) == doctest::Approx(l[row % 3] - std::log(z)).epsilon(1e-5));
  }
}

TEST_CASE("actor_critic_loss_terms: the softmax loss, with gradients per log-prob and entropy") {
  Rng rng(5);
  const Eigen::Index steps = 3, batch = 2, actions_n = 4, n = steps * batch;
  RowMatrixXf logits(n, actions_n);
  for (Eigen::Index i = 0; i < logits.size(); ++i)
    logits.data()[i] = static_cast<float>(rng.uniform(-2, 2));
  Eigen::ArrayXXi actions(steps, batch);
  Eigen::ArrayXXf values(steps, batch), mask(steps, batch);
  VTraceReturns targets{Eigen::ArrayXXf(steps, batch), Eigen::ArrayXXf(steps, batch)};
  for (Eigen::Index t = 0; t < steps; ++t)
    for (Eigen::Index b = 0; b < batch; ++b) {
      actions(t, b) = static_cast<int>(rng.below(4));
      values(t, b) = static_cast<float>(rng.uniform(-1, 1));
      targets.vs(t, b) = static_cast<float>(rng.uniform(-1, 1));
      targets.pg_advantages(t, b) = static_cast<float>(rng.uniform(-1, 1));
      mask(t, b) = (t == 1 && b == 0) ? 0.0f : 1.0f;
    }
  // c = 1: the plain bonus; 0.85 of ln 4 cuts some of these frames' entropies, not all.
  for (const float ceiling : {1.0f, 0.85f}) {
    CAPTURE(ceiling);
    const ActorCriticLossOptions options{
        .baseline_cost = 0.5f, .entropy_cost = 0.1f, .entropy_ceiling = ceiling};
    const ActorCriticLoss reference =
        actor_critic_loss(logits, actions, values, targets, options, &mask);
    const Eigen::ArrayXXf max_entropy =
        Eigen::ArrayXXf::Constant(steps, batch, std::log(static_cast<float>(actions_n)));

    // The same through the per-frame terms: log-probs and entropies of the rows t * B + b.
    Tensor logits_t = Tensor::empty({n, actions_n});
    logits_t.matrix<float>() = logits;
    Tensor actions_t = Tensor::empty({n}, DType::i32);
    for (Eigen::Index t = 0; t < steps; ++t)
      for (Eigen::Index b = 0; b < batch; ++b)
        actions_t.data<std::int32_t>()[t * batch + b] = actions(t, b);
    const PolicyTerms terms = policy_terms(logits_t, Tensor(), actions_t);
    Eigen::ArrayXXf log_probs(steps, batch), entropy(steps, batch);
    for (Eigen::Index t = 0; t < steps; ++t)
      for (Eigen::Index b = 0; b < batch; ++b) {
        log_probs(t, b) = terms.log_probs(t * batch + b);
        entropy(t, b) = terms.entropy(t * batch + b);
      }
    const ActorCriticTerms loss =
        actor_critic_loss_terms(log_probs, entropy, values, targets, options, &mask, &max_entropy);
    if (ceiling < 1.0f) {
      const auto cut = (entropy >= ceiling * max_entropy && mask > 0.0f).count();
      CHECK(cut > 0);
      CHECK(cut < 5);
      CHECK((loss.grad_entropy == 0.0f).count() == cut + 1);  // + the masked frame
      CHECK_THROWS_WITH_AS(
          actor_critic_loss_terms(log_probs, entropy, values, targets, options, &mask),
          doctest::Contains("entropy_ceiling 0.85 needs each frame's maximum entropy"), Error);
    }
    CHECK(loss.policy_loss == doctest::Approx(reference.policy_loss).epsilon(1e-5));
    CHECK(loss.baseline_loss == doctest::Approx(reference.baseline_loss).epsilon(1e-5));
    CHECK(loss.entropy_loss == doctest::Approx(reference.entropy_loss).epsilon(1e-5));
    CHECK(loss.total_loss == doctest::Approx(reference.total_loss).epsilon(1e-5));
    CHECK(loss.mean_entropy == doctest::Approx(reference.mean_entropy).epsilon(1e-5));
    CHECK((loss.grad_values - reference.grad_values).abs().maxCoeff() < 1e-6f);
    Eigen::ArrayXf g_lp(n), g_ent(n);
    for (Eigen::Index t = 0; t < steps; ++t)
      for (Eigen::Index b = 0; b < batch; ++b) {
        g_lp(t * batch + b) = loss.grad_log_probs(t, b);
        g_ent(t * batch + b) = loss.grad_entropy(t, b);
      }
    const Tensor grad = Tensor::empty({n, actions_n});
    policy_terms_backward(logits_t, Tensor(), actions_t, g_lp, g_ent, grad, Tensor());
    CHECK((grad.matrix<float>() - reference.grad_logits).cwiseAbs().maxCoeff() < 1e-6f);
    CHECK_THROWS_WITH_AS(actor_critic_loss_terms(log_probs, entropy.topRows(2), values, targets,
                                                 options, nullptr, &max_entropy),
                         doctest::Contains("must all be [3, 2]"), Error);
  }
}

TEST_CASE("policy_terms with a legal-action mask: a softmax over the legal actions only") {
  Rng rng(11);
  const std::int64_t m = 4, k = 5;
  Tensor logits = Tensor::empty({m, k});
  Tensor actions = Tensor::empty({m}, DType::i32);
  for (std::int64_t i = 0; i < m * k; ++i)
    logits.data<float>()[i] = static_cast<float>(rng.uniform(-2, 2));
  // Row 3's best logit is illegal, so masking changes its distribution most.
  logits.data<float>()[3 * k + 4] = 5.0f;
  const std::vector<std::uint8_t> legal = {1, 1, 1, 1, 1,  //
                                           0, 1, 0, 1, 1,  //
                                           0, 0, 1, 0, 0,  // one legal action: log-prob 0
                                           1, 0, 1, 1, 0};
  const std::int32_t taken[m] = {4, 3, 2, 0};
  for (std::int64_t i = 0; i < m; ++i) actions.data<std::int32_t>()[i] = taken[i];

  const PolicyTerms terms = policy_terms(logits, Tensor(), actions, legal);
  for (std::int64_t i = 0; i < m; ++i) {
    CAPTURE(i);
    double z = 0.0;
    for (std::int64_t j = 0; j < k; ++j)
      if (legal[static_cast<std::size_t>(i * k + j)])
        z += std::exp(static_cast<double>(logits.data<float>()[i * k + j]));
    double entropy = 0.0;
    for (std::int64_t j = 0; j < k; ++j)
      if (legal[static_cast<std::size_t>(i * k + j)]) {
        const double p = std::exp(static_cast<double>(logits.data<float>()[i * k + j])) / z;
        entropy -= p * std::log(p);
      }
    CHECK(terms.log_probs(i) ==
          doctest::Approx(logits.data<float>()[i * k + taken[i]] - std::log(z)).epsilon(1e-5));
    CHECK(terms.entropy(i) == doctest::Approx(entropy).epsilon(1e-5));
  }
  CHECK(terms.log_probs(2) == doctest::Approx(0.0).epsilon(1e-6));
  CHECK(terms.entropy(2) == doctest::Approx(0.0).epsilon(1e-6));
  // Unmasked, row 3 differs: the mask is what made these.
  CHECK(std::abs(policy_terms(logits, Tensor(), actions).log_probs(3) - terms.log_probs(3)) > 1.0f);

  // The gradients against finite differences; the illegal logits get exactly none.
  Eigen::ArrayXf g_lp(m), g_ent(m);
  for (std::int64_t i = 0; i < m; ++i) {
    g_lp(i) = static_cast<float>(rng.uniform(-1, 1));
    g_ent(i) = static_cast<float>(rng.uniform(-1, 1));
  }
  auto objective = [&] {
    const PolicyTerms t = policy_terms(logits, Tensor(), actions, legal);
    return static_cast<double>((g_lp * t.log_probs + g_ent * t.entropy).sum());
  };
  const Tensor grad = Tensor::empty({m, k});
  policy_terms_backward(logits, Tensor(), actions, g_lp, g_ent, grad, Tensor(), legal);
  for (std::int64_t i = 0; i < m * k; ++i) {
    CAPTURE(i);
    float& x = logits.data<float>()[i];
    const float saved = x, h = 1e-2f;
    x = saved + h;
    const double up = objective();
    x = saved - h;
    const double down = objective();
    x = saved;
    CHECK(grad.data<float>()[i] == doctest::Approx((up - down) / (2.0 * h)).epsilon(2e-2));
    if (!legal[static_cast<std::size_t>(i)]) CHECK(grad.data<float>()[i] == 0.0f);
  }

  // The behaviour policy's log-probabilities take the same mask.
  UnrollBatch batch;
  batch.flags = Tensor::zeros({2, 2}, DType::u8);
  batch.behaviour = logits.reshape({2, 2, k});
  batch.actions = actions.reshape({2, 2});
  const Eigen::ArrayXf behaviour = behaviour_log_probs(batch, 2, legal);
  for (std::int64_t i = 0; i < m; ++i)
    CHECK(behaviour(i) == doctest::Approx(terms.log_probs(i)).epsilon(1e-6));
  CHECK_THROWS_WITH_AS(policy_terms(logits, Tensor(), actions, std::span(legal).first(10)),
                       doctest::Contains("mask of 10 entries for 4 frames of 5 actions"), Error);
}

TEST_CASE("legal_actions: the masks of a batch's steps; a row that allows nothing allows all") {
  UnrollSpec spec;
  spec.observation = {{1}, DType::f32};
  spec.num_actions = 3;
  spec.length = 2;
  spec.fields = {{kActionMaskField, {{3}, DType::u8}}};
  std::vector<std::unique_ptr<Unroll>> unrolls;
  const std::uint8_t masks[2][6] = {{1, 0, 1, 0, 0, 0}, {0, 1, 0, 1, 1, 0}};
  for (const auto& m : masks) {
    unrolls.push_back(Unroll::allocate(spec));
    std::memcpy(unrolls.back()->fields[0].data<std::uint8_t>(), m, 6);
  }
  UnrollBatch batch;
  batch.stack(unrolls, spec);
  // Frame t * B + b: (t 0, b 0), (0, 1), (1, 0) allows nothing: all, (1, 1).
  const std::vector<std::uint8_t> expected = {1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 0};
  CHECK(legal_actions(batch) == expected);
  spec.fields.clear();
  batch.stack(std::span(unrolls).first(1), spec);
  CHECK(legal_actions(batch).empty());
}

}  // namespace test_policy_terms
