package client

import (
	"testing"
	"time"
)

func TestRetryWait(t *testing.T) {
	t.Parallel()
	p := RetryPolicy{MaxAttempts: 5, MinDelay: 200 * time.Millisecond, MaxDelay: 5 * time.Second, Jitter: 0.2}
	noJitter := p
	noJitter.Jitter = 0
	tests := []struct {
		name       string
		policy     RetryPolicy
		retry      int
		retryAfter time.Duration
		random     float64
		want       time.Duration
	}{
		{"slotd's retry_after is waited", noJitter, 1, time.Second, 0.9, time.Second},
		{"retry_after does not grow with the retries", noJitter, 4, time.Second, 0, time.Second},
		{"retry_after is capped", noJitter, 1, 30 * time.Second, 0, 5 * time.Second},
		{"no retry_after: MinDelay first", noJitter, 1, 0, 0, 200 * time.Millisecond},
		{"no retry_after: doubled per retry", noJitter, 3, 0, 0, 800 * time.Millisecond},
		{"no retry_after: capped", noJitter, 20, 0, 0, 5 * time.Second},
		{"jitter is added, never taken", p, 1, time.Second, 0.5, 1100 * time.Millisecond},
		{"no jitter at random 0", p, 1, time.Second, 0, time.Second},
		{"jitter does not pass the cap", p, 1, 5 * time.Second, 0.99, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.policy.wait(tt.retry, tt.retryAfter, tt.random); got != tt.want {
				t.Errorf("wait(retry %d, retry_after %s, random %.2f) = %s, want %s", tt.retry, tt.retryAfter, tt.random, got, tt.want)
			}
		})
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	t.Parallel()
	if got := (RetryPolicy{}).withDefaults(); got != DefaultRetryPolicy {
		t.Errorf("zero policy = %+v, want %+v", got, DefaultRetryPolicy)
	}
	if got := (RetryPolicy{MaxAttempts: 1, Jitter: -1}).withDefaults(); got.MaxAttempts != 1 || got.Jitter != 0 {
		t.Errorf("MaxAttempts 1, Jitter -1 = %+v, want MaxAttempts 1 and no jitter", got)
	}
}
