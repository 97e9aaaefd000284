// The MJCF text of seedrl's MuJoCo tasks (src/env/mujoco_models.cpp). Private to src/.
#pragma once

namespace seedrl::detail {

extern const char* const kHalfCheetahXml;
extern const char* const kHopperXml;
extern const char* const kWalker2dXml;
extern const char* const kAntXml;

}  // namespace seedrl::detail
