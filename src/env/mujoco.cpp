#include "seedrl/env/mujoco.hpp"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "mujoco_models.hpp"
#include "seedrl/core/error.hpp"

namespace seedrl {
namespace {

struct TaskSpec {
  const char* name;
  const char* xml;
  int frame_skip;
  int observation_size;
  int skipped_positions;  // leading qpos entries left out of the observation (x, or x and y)
  bool clip_velocity;     // observations hold clip(qvel, -10, 10)
  double control_cost_weight;
  double healthy_reward;  // 0: no healthy reward and no termination
  double reset_noise;
  bool gaussian_velocity_noise;  // qvel += noise * N(0, 1) rather than U(-noise, noise)
};

const TaskSpec& spec_of(MujocoTask task) {
  static const TaskSpec specs[] = {
      {"halfcheetah", detail::kHalfCheetahXml, 5, 17, 1, false, 0.1, 0.0, 0.1, true},
      {"hopper", detail::kHopperXml, 4, 11, 1, true, 1e-3, 1.0, 5e-3, false},
      {"walker2d", detail::kWalker2dXml, 4, 17, 1, true, 1e-3, 1.0, 5e-3, false},
      {"ant", detail::kAntXml, 5, 27, 2, false, 0.5, 1.0, 0.1, true},
  };
  return specs[static_cast<int>(task)];
}

// A task's model, compiled once per process and shared by every environment of that task (MuJoCo
// only reads a model during simulation).
std::shared_ptr<const mjModel> load_model(MujocoTask task) {
  static std::mutex mutex;
  static std::shared_ptr<const mjModel> models[4];
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<const mjModel>& model = models[static_cast<int>(task)];
  if (model) return model;

  const TaskSpec& spec = spec_of(task);
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  const std::string file = std::string(spec.name) + ".xml";
  const int size = static_cast<int>(std::strlen(spec.xml));
  SEEDRL_REQUIRE(mj_makeEmptyFileVFS(vfs.get(), file.c_str(), size) == 0,
                 "MujocoEnv: cannot make the virtual model file ", file);
  std::memcpy(vfs->filedata[vfs->nfile - 1], spec.xml, static_cast<std::size_t>(size));
  char error[1000] = "";
  mjModel* loaded = mj_loadXML(file.c_str(), vfs.get(), error, sizeof error);
  mj_deleteVFS(vfs.get());
  SEEDRL_REQUIRE(loaded != nullptr, "MujocoEnv: MuJoCo ", mj_versionString(), " refused the ",
                 spec.name, " model: ", error);
  model = std::shared_ptr<const mjModel>(
      loaded, [](const mjModel* m) { mj_deleteModel(const_cast<mjModel*>(m)); });
  return model;
}

}  // namespace

MujocoTask parse_mujoco_task(std::string_view name) {
  if (name == "halfcheetah" || name == "half_cheetah") return MujocoTask::half_cheetah;
  if (name == "hopper") return MujocoTask::hopper;
  if (name == "walker2d") return MujocoTask::walker2d;
  if (name == "ant") return MujocoTask::ant;
  fail("unknown MuJoCo task '", name, "' (halfcheetah, hopper, walker2d or ant)");
}

std::string_view mujoco_task_name(MujocoTask task) {
  return spec_of(task).name;
}
std::string_view mujoco_model_xml(MujocoTask task) {
  return spec_of(task).xml;
}

struct MujocoEnv::Impl {
  MujocoTask task;
  const TaskSpec* spec;
  MujocoOptions options;
  Rng rng;
  std::shared_ptr<const mjModel> model;
  mjData* data = nullptr;
  int torso = -1;  // the torso body's id (Ant's x is its position)
  std::int32_t steps = 0;
  bool over = true;
  MujocoRewardTerms last;

  Impl(MujocoTask t, std::uint64_t seed, const MujocoOptions& o)
      : task(t), spec(&spec_of(t)), options(o), rng(seed), model(load_model(t)) {
    data = mj_makeData(model.get());
    SEEDRL_REQUIRE(data != nullptr, "MujocoEnv: MuJoCo could not allocate its data");
    torso = mj_name2id(model.get(), mjOBJ_BODY, "torso");
    SEEDRL_REQUIRE(torso >= 0, "MujocoEnv: the ", spec->name, " model has no body 'torso'");
  }
  ~Impl() { mj_deleteData(data); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  double x_position() const {
    return task == MujocoTask::ant ? data->xpos[3 * torso] : data->qpos[0];
  }

  bool healthy() const {
    const mjtNum* q = data->qpos;
    switch (task) {
      case MujocoTask::half_cheetah:
        return true;
      case MujocoTask::hopper: {
        for (int i = 2; i < model->nq; ++i)
          if (!(q[i] > -100.0 && q[i] < 100.0)) return false;
        for (int i = 0; i < model->nv; ++i)
          if (!(data->qvel[i] > -100.0 && data->qvel[i] < 100.0)) return false;
        return q[1] > 0.7 && q[2] > -0.2 && q[2] < 0.2;
      }
      case MujocoTask::walker2d:
        return q[1] > 0.8 && q[1] < 2.0 && q[2] > -1.0 && q[2] < 1.0;
      case MujocoTask::ant: {
        for (int i = 0; i < model->nq; ++i)
          if (!std::isfinite(q[i])) return false;
        for (int i = 0; i < model->nv; ++i)
          if (!std::isfinite(data->qvel[i])) return false;
        return q[2] >= 0.2 && q[2] <= 1.0;
      }
    }
    return true;
  }

  void write(const Tensor& observation) const {
    require_tensor(observation, {spec->observation_size}, DType::f32, "MujocoEnv (", spec->name,
                   "): observation");
    float* out = observation.data<float>();
    int k = 0;
    for (int i = spec->skipped_positions; i < model->nq; ++i)
      out[k++] = static_cast<float>(data->qpos[i]);
    for (int i = 0; i < model->nv; ++i) {
      const double v = data->qvel[i];
      out[k++] = static_cast<float>(spec->clip_velocity ? std::clamp(v, -10.0, 10.0) : v);
    }
  }
};

MujocoEnv::MujocoEnv(MujocoTask task, std::uint64_t seed, const MujocoOptions& options) {
  SEEDRL_REQUIRE(options.max_episode_steps > 0,
                 "MujocoOptions.max_episode_steps must be positive, got ",
                 options.max_episode_steps);
  impl_ = std::make_unique<Impl>(task, seed, options);
  const int expected = impl_->model->nq - impl_->spec->skipped_positions + impl_->model->nv;
  SEEDRL_REQUIRE(expected == impl_->spec->observation_size, "MujocoEnv: the ", impl_->spec->name,
                 " model gives ", expected, " observation values, not ",
                 impl_->spec->observation_size);
}
MujocoEnv::MujocoEnv(MujocoEnv&&) noexcept = default;
MujocoEnv& MujocoEnv::operator=(MujocoEnv&&) noexcept = default;
MujocoEnv::~MujocoEnv() = default;

MujocoTask MujocoEnv::task() const {
  return impl_->task;
}

TensorSpec MujocoEnv::observation_spec() const {
  return {{impl_->spec->observation_size}, DType::f32};
}

ActionSpec MujocoEnv::action_spec() const {
  const mjModel* m = impl_->model.get();
  std::vector<float> low(static_cast<std::size_t>(m->nu)), high(low.size());
  for (int i = 0; i < m->nu; ++i) {
    low[static_cast<std::size_t>(i)] = static_cast<float>(m->actuator_ctrlrange[2 * i]);
    high[static_cast<std::size_t>(i)] = static_cast<float>(m->actuator_ctrlrange[2 * i + 1]);
  }
  return ActionSpec::box(std::move(low), std::move(high));
}

double MujocoEnv::dt() const {
  return impl_->model->opt.timestep * impl_->spec->frame_skip;
}

void MujocoEnv::reset(const Tensor& observation) {
  Impl& s = *impl_;
  const mjModel* m = s.model.get();
  mj_resetData(m, s.data);
  const double noise = s.spec->reset_noise;
  for (int i = 0; i < m->nq; ++i) s.data->qpos[i] = m->qpos0[i] + s.rng.uniform(-noise, noise);
  for (int i = 0; i < m->nv; ++i)
    s.data->qvel[i] =
        s.spec->gaussian_velocity_noise ? noise * s.rng.normal() : s.rng.uniform(-noise, noise);
  mj_forward(m, s.data);
  s.steps = 0;
  s.over = false;
  s.last = {};
  s.write(observation);
}

StepResult MujocoEnv::step(std::span<const float> action, const Tensor& observation) {
  Impl& s = *impl_;
  const mjModel* m = s.model.get();
  SEEDRL_REQUIRE(static_cast<int>(action.size()) == m->nu, "MujocoEnv (", s.spec->name,
                 "): an action is ", m->nu, " values, got ", action.size());
  SEEDRL_REQUIRE(!s.over, "MujocoEnv (", s.spec->name,
                 "): step after the episode ended; call reset()");
  double squares = 0.0;
  for (int i = 0; i < m->nu; ++i) {
    const float a = action[static_cast<std::size_t>(i)];
    SEEDRL_REQUIRE(std::isfinite(a), "MujocoEnv (", s.spec->name, "): action value ", i,
                   " is not finite (", a, ")");
    s.data->ctrl[i] = a;
    squares += static_cast<double>(a) * a;
  }
  const double x_before = s.x_position();
  for (int k = 0; k < s.spec->frame_skip; ++k) mj_step(m, s.data);
  // Gymnasium reads positions after the steps without another forward pass: xpos is that of the
  // last step's start; a forward pass makes it the final state's, as qpos is.
  mj_forward(m, s.data);
  const double x_after = s.x_position();
  ++s.steps;

  MujocoRewardTerms& r = s.last;
  r.x_velocity = (x_after - x_before) / dt();
  r.forward = r.x_velocity;
  r.control_cost = s.spec->control_cost_weight * squares;
  r.healthy = s.spec->healthy_reward;
  StepResult result;
  result.reward = static_cast<float>(r.total());
  result.terminated =
      s.spec->healthy_reward > 0.0 && s.options.terminate_when_unhealthy && !s.healthy();
  result.truncated = !result.terminated && s.steps >= s.options.max_episode_steps;
  s.over = result.episode_over();
  s.write(observation);
  return result;
}

std::vector<double> MujocoEnv::qpos() const {
  return {impl_->data->qpos, impl_->data->qpos + impl_->model->nq};
}
std::vector<double> MujocoEnv::qvel() const {
  return {impl_->data->qvel, impl_->data->qvel + impl_->model->nv};
}

void MujocoEnv::set_state(std::span<const double> qpos, std::span<const double> qvel,
                          const Tensor& observation) {
  Impl& s = *impl_;
  const mjModel* m = s.model.get();
  SEEDRL_REQUIRE(static_cast<int>(qpos.size()) == m->nq && static_cast<int>(qvel.size()) == m->nv,
                 "MujocoEnv::set_state: ", s.spec->name, " has ", m->nq, " positions and ", m->nv,
                 " velocities, got ", qpos.size(), " and ", qvel.size());
  std::copy(qpos.begin(), qpos.end(), s.data->qpos);
  std::copy(qvel.begin(), qvel.end(), s.data->qvel);
  mj_forward(m, s.data);
  s.write(observation);
}

bool MujocoEnv::healthy() const {
  return impl_->healthy();
}
const MujocoRewardTerms& MujocoEnv::last_reward() const {
  return impl_->last;
}

}  // namespace seedrl
