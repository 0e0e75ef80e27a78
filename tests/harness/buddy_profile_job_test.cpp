// `moesim buddy profile` called directly (harness/buddy_profile_job.h) on the tiny trace
// (tests/data/traces/tiny.route.csv, 2 layers x 4 experts, top-2). Its co-activated pairs, one token each:
//   layer 0: {1,3} {1,2} {0,1} {2,3}      layer 1: {0,3} {2,3} {0,1}
// Without smoothing (epsilon 0) q_{j|i} splits evenly over i's partners, and a buddy list takes partners in
// order of q (ties: smaller id first) until their q adds up to alpha. At alpha 0.5: layer 0's expert 1
// (partners 0, 2, 3 at 1/3 each) takes 0 and 2, expert 2 (1 and 3 at 1/2) takes 1; every other list holds one
// expert: 5 buddies in layer 0, 4 in layer 1, 8 lists. At alpha 1 every partner: 2 x 7 pairs = 14 buddies.
#include "harness/buddy_profile_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/error.h"
#include "base/json_io.h"
#include "tests/error_of.h"
#include "tests/fixtures.h"
#include "tests/harness/test_dir.h"

namespace moesim::harness {
namespace {

using test::error_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kTiny = test::test_data("traces/tiny.route.csv");

class BuddyProfileJob : public test::TestDir {
 protected:
  BuddyProfileArgs args(double alpha) const {
    BuddyProfileArgs a;
    a.trace = kTiny;
    a.out = path("buddies.json");
    a.opt.alpha = alpha;
    a.opt.epsilon = 0;
    return a;
  }
};

TEST_F(BuddyProfileJob, ListsTakePartnersUntilAlphaByHand) {
  const BuddyProfileResult r = buddy_profile(args(0.5));
  ASSERT_EQ(r.profile.layers, 2u);
  ASSERT_EQ(r.profile.experts, 4u);
  EXPECT_THAT(r.profile.layer[0].buddies[1], ElementsAre(0u, 2u));
  EXPECT_THAT(r.profile.layer[0].buddies[2], ElementsAre(1u));
  EXPECT_THAT(r.profile.layer[1].buddies[3], ElementsAre(0u));
  EXPECT_EQ(r.lists, 8u);
  EXPECT_EQ(r.buddies, 9u);
  EXPECT_FALSE(r.synthetic);
  // The file written is the profile the runtime reads (--routing buddy:profile=...).
  const traces::BuddyProfile back =
      traces::buddy_profile_from_json(load_json_file(path("buddies.json")), path("buddies.json"));
  EXPECT_EQ(back.layer[0].buddies, r.profile.layer[0].buddies);
  EXPECT_EQ(back.layer[1].buddies, r.profile.layer[1].buddies);
}

TEST_F(BuddyProfileJob, AtAlphaOneEveryPartnerIsABuddy) {
  const BuddyProfileResult r = buddy_profile(args(1.0));
  EXPECT_EQ(r.lists, 8u);
  EXPECT_EQ(r.buddies, 14u);
  EXPECT_THAT(r.profile.layer[0].buddies[1], ElementsAre(0u, 2u, 3u));
}

TEST_F(BuddyProfileJob, RefusesBadOptionsBeforeWritingAnything) {
  BuddyProfileArgs a = args(0.5);
  a.weighting = "counts";
  EXPECT_THAT(error_of([&] { buddy_profile(a); }), HasSubstr("--weighting: 'counts'"));
  a = args(1.5);
  EXPECT_THAT(error_of([&] { buddy_profile(a); }), HasSubstr("--alpha must be in (0, 1]"));
  a = args(0.5);
  a.opt.k_max = 0;
  EXPECT_THAT(error_of([&] { buddy_profile(a); }), HasSubstr("--k-max"));
  a = args(0.5);
  a.opt.epsilon = -1;
  EXPECT_THAT(error_of([&] { buddy_profile(a); }), HasSubstr("--epsilon"));
  EXPECT_FALSE(std::filesystem::exists(path("buddies.json")));
}

}  // namespace
}  // namespace moesim::harness
