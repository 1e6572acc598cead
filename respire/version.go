package respire

// Version is this release of the module, in semantic-versioning form with a
// leading "v", as a tag of the module would name it. Between releases it is
// the next version with a "-dev" suffix. It matches the newest heading of
// CHANGELOG.md (a test checks this): cut a release by giving that heading
// the version and setting Version to it.
const Version = "v0.2.0-dev"
