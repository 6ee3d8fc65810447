// The SDK's version, which follows the protos (clients/versions.txt); package.json repeats it.
export const VERSION = "1.2.0";
