// The MJCF models of seedrl's MuJoCo locomotion tasks, written for seedrl from the published
// model parameters of the Gymnasium v4 tasks (body sizes and placements, masses or densities,
// joint ranges, stiffness and damping, actuator gears, friction, integrator and timestep), which
// are physical facts of those benchmarks. Rendering-only parts (textures, materials, cameras,
// lights) are left out. Every model here uses local coordinates.
#include "mujoco_models.hpp"

namespace seedrl::detail {

// HalfCheetah: a planar cheetah of 7 capsules (torso, head, two three-segment legs), 14 kg in
// total, 6 motors; timestep 0.01 s (Euler).
const char* const kHalfCheetahXml = R"(
<mujoco model="seedrl_half_cheetah">
  <compiler angle="radian" coordinate="local" inertiafromgeom="true" settotalmass="14"/>
  <default>
    <joint armature=".1" damping=".01" limited="true" solimplimit="0 .8 .03" solreflimit=".02 1"
           stiffness="8"/>
    <geom conaffinity="0" condim="3" contype="1" friction=".4 .1 .1" solimp="0.0 0.8 0.01"
          solref="0.02 1"/>
    <motor ctrllimited="true" ctrlrange="-1 1"/>
  </default>
  <option gravity="0 0 -9.81" timestep="0.01"/>
  <worldbody>
    <geom name="floor" type="plane" conaffinity="1" pos="0 0 0" size="40 40 40"/>
    <body name="torso" pos="0 0 .7">
      <joint name="rootx" type="slide" axis="1 0 0" pos="0 0 0" armature="0" damping="0"
             limited="false" stiffness="0"/>
      <joint name="rootz" type="slide" axis="0 0 1" pos="0 0 0" armature="0" damping="0"
             limited="false" stiffness="0"/>
      <joint name="rooty" type="hinge" axis="0 1 0" pos="0 0 0" armature="0" damping="0"
             limited="false" stiffness="0"/>
      <geom name="torso" type="capsule" fromto="-.5 0 0 .5 0 0" size="0.046"/>
      <geom name="head" type="capsule" axisangle="0 1 0 .87" pos=".6 0 .1" size="0.046 .15"/>
      <body name="bthigh" pos="-.5 0 0">
        <joint name="bthigh" type="hinge" axis="0 1 0" pos="0 0 0" range="-.52 1.05"
               stiffness="240" damping="6"/>
        <geom name="bthigh" type="capsule" axisangle="0 1 0 -3.8" pos=".1 0 -.13"
              size="0.046 .145"/>
        <body name="bshin" pos=".16 0 -.25">
          <joint name="bshin" type="hinge" axis="0 1 0" pos="0 0 0" range="-.785 .785"
                 stiffness="180" damping="4.5"/>
          <geom name="bshin" type="capsule" axisangle="0 1 0 -2.03" pos="-.14 0 -.07"
                size="0.046 .15"/>
          <body name="bfoot" pos="-.28 0 -.14">
            <joint name="bfoot" type="hinge" axis="0 1 0" pos="0 0 0" range="-.4 .785"
                   stiffness="120" damping="3"/>
            <geom name="bfoot" type="capsule" axisangle="0 1 0 -.27" pos=".03 0 -.097"
                  size="0.046 .094"/>
          </body>
        </body>
      </body>
      <body name="fthigh" pos=".5 0 0">
        <joint name="fthigh" type="hinge" axis="0 1 0" pos="0 0 0" range="-1 .7" stiffness="180"
               damping="4.5"/>
        <geom name="fthigh" type="capsule" axisangle="0 1 0 .52" pos="-.07 0 -.12"
              size="0.046 .133"/>
        <body name="fshin" pos="-.14 0 -.24">
          <joint name="fshin" type="hinge" axis="0 1 0" pos="0 0 0" range="-1.2 .87"
                 stiffness="120" damping="3"/>
          <geom name="fshin" type="capsule" axisangle="0 1 0 -.6" pos=".065 0 -.09"
                size="0.046 .106"/>
          <body name="ffoot" pos=".13 0 -.18">
            <joint name="ffoot" type="hinge" axis="0 1 0" pos="0 0 0" range="-.5 .5"
                   stiffness="60" damping="1.5"/>
            <geom name="ffoot" type="capsule" axisangle="0 1 0 -.6" pos=".045 0 -.07"
                  size="0.046 .07"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="bthigh" joint="bthigh" gear="120"/>
    <motor name="bshin" joint="bshin" gear="90"/>
    <motor name="bfoot" joint="bfoot" gear="60"/>
    <motor name="fthigh" joint="fthigh" gear="120"/>
    <motor name="fshin" joint="fshin" gear="60"/>
    <motor name="ffoot" joint="ffoot" gear="30"/>
  </actuator>
</mujoco>
)";

// Hopper: a planar one-legged robot (torso, thigh, leg, foot capsules of density 1000), 3 motors
// of gear 200; timestep 0.002 s (RK4). The torso starts 1.25 m up (rootz's reference).
const char* const kHopperXml = R"(
<mujoco model="seedrl_hopper">
  <compiler angle="degree" coordinate="local" inertiafromgeom="true"/>
  <default>
    <joint armature="1" damping="1" limited="true"/>
    <geom conaffinity="1" condim="1" contype="1" margin="0.001" friction="0.8 .1 .1"
          solimp=".8 .8 .01" solref=".02 1"/>
    <motor ctrllimited="true" ctrlrange="-.4 .4"/>
  </default>
  <option integrator="RK4" timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" conaffinity="1" condim="3" pos="0 0 0" size="20 20 .125"/>
    <body name="torso" pos="0 0 0">
      <joint name="rootx" type="slide" axis="1 0 0" pos="0 0 0" armature="0" damping="0"
             limited="false" stiffness="0"/>
      <joint name="rootz" type="slide" axis="0 0 1" pos="0 0 0" ref="1.25" armature="0"
             damping="0" limited="false" stiffness="0"/>
      <joint name="rooty" type="hinge" axis="0 1 0" pos="0 0 1.25" armature="0" damping="0"
             limited="false" stiffness="0"/>
      <geom name="torso_geom" type="capsule" fromto="0 0 1.45 0 0 1.05" size="0.05"
            friction="0.9"/>
      <body name="thigh" pos="0 0 0">
        <joint name="thigh_joint" type="hinge" axis="0 -1 0" pos="0 0 1.05" range="-150 0"/>
        <geom name="thigh_geom" type="capsule" fromto="0 0 1.05 0 0 0.6" size="0.05"
              friction="0.9"/>
        <body name="leg" pos="0 0 0">
          <joint name="leg_joint" type="hinge" axis="0 -1 0" pos="0 0 0.6" range="-150 0"/>
          <geom name="leg_geom" type="capsule" fromto="0 0 0.6 0 0 0.1" size="0.04"
                friction="0.9"/>
          <body name="foot" pos="0 0 0">
            <joint name="foot_joint" type="hinge" axis="0 -1 0" pos="0 0 0.1" range="-45 45"/>
            <geom name="foot_geom" type="capsule" fromto="-0.13 0 0.1 0.26 0 0.1" size="0.06"
                  friction="2.0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="thigh_joint" ctrllimited="true" ctrlrange="-1.0 1.0" gear="200.0"/>
    <motor joint="leg_joint" ctrllimited="true" ctrlrange="-1.0 1.0" gear="200.0"/>
    <motor joint="foot_joint" ctrllimited="true" ctrlrange="-1.0 1.0" gear="200.0"/>
  </actuator>
</mujoco>
)";

// Walker2d: a planar biped (torso and two legs of thigh, leg and foot; density 1000), 6 motors
// of gear 100; timestep 0.002 s (RK4). The torso starts 1.25 m up.
const char* const kWalker2dXml = R"(
<mujoco model="seedrl_walker2d">
  <compiler angle="degree" coordinate="local" inertiafromgeom="true"/>
  <default>
    <joint armature="0.01" damping=".1" limited="true"/>
    <geom conaffinity="0" condim="3" contype="1" density="1000" friction=".7 .1 .1"/>
  </default>
  <option integrator="RK4" timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" conaffinity="1" condim="3" pos="0 0 0" size="40 40 40"/>
    <body name="torso" pos="0 0 0">
      <joint name="rootx" type="slide" axis="1 0 0" pos="0 0 0" armature="0" damping="0"
             limited="false" stiffness="0"/>
      <joint name="rootz" type="slide" axis="0 0 1" pos="0 0 0" ref="1.25" armature="0"
             damping="0" limited="false" stiffness="0"/>
      <joint name="rooty" type="hinge" axis="0 1 0" pos="0 0 1.25" armature="0" damping="0"
             limited="false" stiffness="0"/>
      <geom name="torso_geom" type="capsule" fromto="0 0 1.45 0 0 1.05" size="0.05"
            friction="0.9"/>
      <body name="thigh" pos="0 0 0">
        <joint name="thigh_joint" type="hinge" axis="0 -1 0" pos="0 0 1.05" range="-150 0"/>
        <geom name="thigh_geom" type="capsule" fromto="0 0 1.05 0 0 0.6" size="0.05"
              friction="0.9"/>
        <body name="leg" pos="0 0 0">
          <joint name="leg_joint" type="hinge" axis="0 -1 0" pos="0 0 0.6" range="-150 0"/>
          <geom name="leg_geom" type="capsule" fromto="0 0 0.6 0 0 0.1" size="0.04"
                friction="0.9"/>
          <body name="foot" pos="0 0 0">
            <joint name="foot_joint" type="hinge" axis="0 -1 0" pos="0 0 0.1" range="-45 45"/>
            <geom name="foot_geom" type="capsule" fromto="-0.0 0 0.1 0.2 0 0.1" size="0.06"
                  friction="0.9"/>
          </body>
        </body>
      </body>
      <body name="thigh_left" pos="0 0 0">
        <joint name="thigh_left_joint" type="hinge" axis="0 -1 0" pos="0 0 1.05"
               range="-150 0"/>
        <geom name="thigh_left_geom" type="capsule" fromto="0 0 1.05 0 0 0.6" size="0.05"
              friction="0.9"/>
        <body name="leg_left" pos="0 0 0">
          <joint name="leg_left_joint" type="hinge" axis="0 -1 0" pos="0 0 0.6" range="-150 0"/>
          <geom name="leg_left_geom" type="capsule" fromto="0 0 0.6 0 0 0.1" size="0.04"
                friction="0.9"/>
          <body name="foot_left" pos="0 0 0">
            <joint name="foot_left_joint" type="hinge" axis="0 -1 0" pos="0 0 0.1"
                   range="-45 45"/>
            <geom name="foot_left_geom" type="capsule" fromto="-0.0 0 0.1 0.2 0 0.1"
                  size="0.06" friction="1.9"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="thigh_joint" ctrllimited="true" ctrlrange="-1.0 1.0" gear="100"/>
    <motor joint="leg_joint" ctrllimited="true" ctrlrange="-1.0 1.0" gear="100"/>
    <motor joint="foot_joint" ctrllimited="true" ctrlrange="-1.0 1.0" gear="100"/>
    <motor joint="thigh_left_joint" ctrllimited="true" ctrlrange="-1.0 1.0" gear="100"/>
    <motor joint="leg_left_joint" ctrllimited="true" ctrlrange="-1.0 1.0" gear="100"/>
    <motor joint="foot_left_joint" ctrllimited="true" ctrlrange="-1.0 1.0" gear="100"/>
  </actuator>
</mujoco>
)";

// Ant: a quadruped (a sphere torso on a free joint and four two-segment legs of capsules,
// density 5), 8 motors of gear 150; timestep 0.01 s (RK4). The torso starts 0.75 m up.
const char* const kAntXml = R"(
<mujoco model="seedrl_ant">
  <compiler angle="degree" coordinate="local" inertiafromgeom="true"/>
  <option integrator="RK4" timestep="0.01"/>
  <default>
    <joint armature="1" damping="1" limited="true"/>
    <geom conaffinity="0" condim="3" density="5.0" friction="1 0.5 0.5" margin="0.01"/>
  </default>
  <worldbody>
    <geom name="floor" type="plane" conaffinity="1" condim="3" pos="0 0 0" size="40 40 40"/>
    <body name="torso" pos="0 0 0.75">
      <geom name="torso_geom" type="sphere" pos="0 0 0" size="0.25"/>
      <joint name="root" type="free" armature="0" damping="0" limited="false" margin="0.01"
             pos="0 0 0"/>
      <body name="front_left_leg" pos="0 0 0">
        <geom name="aux_1_geom" type="capsule" fromto="0.0 0.0 0.0 0.2 0.2 0.0" size="0.08"/>
        <body name="aux_1" pos="0.2 0.2 0">
          <joint name="hip_1" type="hinge" axis="0 0 1" pos="0.0 0.0 0.0" range="-30 30"/>
          <geom name="left_leg_geom" type="capsule" fromto="0.0 0.0 0.0 0.2 0.2 0.0"
                size="0.08"/>
          <body pos="0.2 0.2 0">
            <joint name="ankle_1" type="hinge" axis="-1 1 0" pos="0.0 0.0 0.0" range="30 70"/>
            <geom name="left_ankle_geom" type="capsule" fromto="0.0 0.0 0.0 0.4 0.4 0.0"
                  size="0.08"/>
          </body>
        </body>
      </body>
      <body name="front_right_leg" pos="0 0 0">
        <geom name="aux_2_geom" type="capsule" fromto="0.0 0.0 0.0 -0.2 0.2 0.0" size="0.08"/>
        <body name="aux_2" pos="-0.2 0.2 0">
          <joint name="hip_2" type="hinge" axis="0 0 1" pos="0.0 0.0 0.0" range="-30 30"/>
          <geom name="right_leg_geom" type="capsule" fromto="0.0 0.0 0.0 -0.2 0.2 0.0"
                size="0.08"/>
          <body pos="-0.2 0.2 0">
            <joint name="ankle_2" type="hinge" axis="1 1 0" pos="0.0 0.0 0.0" range="-70 -30"/>
            <geom name="right_ankle_geom" type="capsule" fromto="0.0 0.0 0.0 -0.4 0.4 0.0"
                  size="0.08"/>
          </body>
        </body>
      </body>
      <body name="back_leg" pos="0 0 0">
        <geom name="aux_3_geom" type="capsule" fromto="0.0 0.0 0.0 -0.2 -0.2 0.0" size="0.08"/>
        <body name="aux_3" pos="-0.2 -0.2 0">
          <joint name="hip_3" type="hinge" axis="0 0 1" pos="0.0 0.0 0.0" range="-30 30"/>
          <geom name="back_leg_geom" type="capsule" fromto="0.0 0.0 0.0 -0.2 -0.2 0.0"
                size="0.08"/>
          <body pos="-0.2 -0.2 0">
            <joint name="ankle_3" type="hinge" axis="-1 1 0" pos="0.0 0.0 0.0" range="-70 -30"/>
            <geom name="third_ankle_geom" type="capsule" fromto="0.0 0.0 0.0 -0.4 -0.4 0.0"
                  size="0.08"/>
          </body>
        </body>
      </body>
      <body name="right_back_leg" pos="0 0 0">
        <geom name="aux_4_geom" type="capsule" fromto="0.0 0.0 0.0 0.2 -0.2 0.0" size="0.08"/>
        <body name="aux_4" pos="0.2 -0.2 0">
          <joint name="hip_4" type="hinge" axis="0 0 1" pos="0.0 0.0 0.0" range="-30 30"/>
          <geom name="rightback_leg_geom" type="capsule" fromto="0.0 0.0 0.0 0.2 -0.2 0.0"
                size="0.08"/>
          <body pos="0.2 -0.2 0">
            <joint name="ankle_4" type="hinge" axis="1 1 0" pos="0.0 0.0 0.0" range="30 70"/>
            <geom name="fourth_ankle_geom" type="capsule" fromto="0.0 0.0 0.0 0.4 -0.4 0.0"
                  size="0.08"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="hip_4" ctrllimited="true" ctrlrange="-1.0 1.0" gear="150"/>
    <motor joint="ankle_4" ctrllimited="true" ctrlrange="-1.0 1.0" gear="150"/>
    <motor joint="hip_1" ctrllimited="true" ctrlrange="-1.0 1.0" gear="150"/>
    <motor joint="ankle_1" ctrllimited="true" ctrlrange="-1.0 1.0" gear="150"/>
    <motor joint="hip_2" ctrllimited="true" ctrlrange="-1.0 1.0" gear="150"/>
    <motor joint="ankle_2" ctrllimited="true" ctrlrange="-1.0 1.0" gear="150"/>
    <motor joint="hip_3" ctrllimited="true" ctrlrange="-1.0 1.0" gear="150"/>
    <motor joint="ankle_3" ctrllimited="true" ctrlrange="-1.0 1.0" gear="150"/>
  </actuator>
</mujoco>
)";

}  // namespace seedrl::detail
