/** The Store contract (test/support/store-contract.ts) on the Redis store, against a private redis-server. */
import { storeContract } from "../../../support/store-contract.ts";
import { redisContractPlaces } from "./helpers.ts";

const redis = redisContractPlaces();

storeContract(redis);
