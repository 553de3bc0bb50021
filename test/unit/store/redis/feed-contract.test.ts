/** The feed contract (test/support/feed-contract.ts) on the Redis store, against a private redis-server. */
import { feedContract } from "../../../support/feed-contract.ts";
import { redisContractPlaces } from "./helpers.ts";

const redis = redisContractPlaces();

feedContract(redis);
