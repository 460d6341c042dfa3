package budget

import (
	"context"

	"github.com/headroom-agent/headroom/budget/learning"
)

// A Calibrator keeps what the fleet has learned of each deployment's
// counter: Azure counts with a rule we can only partly see, against a
// limit that can move, so the model the router reserves against is
// corrected from what the headers say. Kept in the store, one container's
// learning serves all. Both drivers implement it.
type Calibrator interface {
	// UpdateCalibration applies f to the deployment's calibration as one
	// atomic step (f may run more than once) and returns the result.
	UpdateCalibration(ctx context.Context, deployment string, f func(learning.Calibration) learning.Calibration) (learning.Calibration, error)
	// Calibrations reads many deployments' calibrations in one round trip;
	// a deployment nothing was learned of yet has the zero Calibration.
	Calibrations(ctx context.Context, deployments ...string) ([]learning.Calibration, error)
}
