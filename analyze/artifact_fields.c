// SPDX-License-Identifier: MIT
/* The artifact's plain figures (artifact_fields.h). */
#include <stddef.h>

#include "artifact_fields.h"
#include "run.h"

const struct artifact_state_field artifact_state_fields[] = {
    {"on_cpu_ns", TSA_ST_ONCPU, 0},
    {"runqueue_ns", TSA_ST_RUNQ, 0},
    {"sleeping_ns", TSA_ST_SLEEP, ACCT_NO_STATES},
    {"uninterruptible_ns", TSA_ST_DISK, ACCT_NO_STATES},
    {"stopped_ns", TSA_ST_STOPPED, ACCT_NO_STATES},
};
const size_t artifact_nstate_fields =
    sizeof(artifact_state_fields) / sizeof(artifact_state_fields[0]);

#define BOTH(f)                                                                 \
	{                                                                       \
		offsetof(struct thread_acct, f), offsetof(struct run_totals, f) \
	}
#define THREAD(f)                                                    \
	{                                                            \
		offsetof(struct thread_acct, f), ARTIFACT_FIELD_NONE \
	}

const struct artifact_count_field artifact_count_fields[] = {
    {"slices", BOTH(slices), ACCT_NO_SLICES, false, true},
    /* a run's totals of switches are there, a number or null: else it is no artifact */
    {"voluntary_switches", BOTH(voluntary), ACCT_NO_SWITCHES, false, true, ARTIFACT_ROW_TOTALS},
    {"involuntary_switches", BOTH(involuntary), ACCT_NO_SWITCHES, false, true, ARTIFACT_ROW_TOTALS},
    {"wakeups", BOTH(wakeups), ACCT_NO_WAKEUPS, false, true},
    {"migrations", BOTH(migrations), ACCT_NO_MIGRATIONS, false, false},
    {"untraced_switch_ins", THREAD(untraced), 0, true, false},
    {"unstamped_wait_ns", THREAD(unstamped_wait_ns), 0, true, false},
    {"steal_ns", BOTH(steal_ns), ACCT_NO_STEAL, false, true},
    {"throttled_ns", BOTH(throttled_ns), ACCT_NO_THROTTLE, false, true},
    {"rt_throttled_ns", BOTH(rt_throttled_ns), ACCT_NO_THROTTLE, false, true},
};
const size_t artifact_ncount_fields =
    sizeof(artifact_count_fields) / sizeof(artifact_count_fields[0]);

const struct artifact_sampled_field artifact_sampled_fields[] = {
    {"max_gap_ns", offsetof(struct thread_sampled, max_gap_ns)},
    {"transitions", offsetof(struct thread_sampled, transitions)},
    {"transition_uncertainty_ns", offsetof(struct thread_sampled, uncertainty_ns)},
    {"untimed_ns", offsetof(struct thread_sampled, untimed_ns)},
};
const size_t artifact_nsampled_fields =
    sizeof(artifact_sampled_fields) / sizeof(artifact_sampled_fields[0]);
const char *const artifact_sampled_states[4] = {"running", "sleeping", "uninterruptible",
						"stopped"};
