package confusion

import "concord/multirater/mcmc"

func mcmcSettings(chains, samples, burnin int, seed uint64) mcmc.Settings {
	return mcmc.Settings{Chains: chains, Samples: samples, Burnin: burnin, Seed: seed}
}
