// A test imports StrainTesting alone: the strategies, profiles and records its
// expectations take and return come with it.
@_exported import StrainRecords
