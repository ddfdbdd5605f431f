// A scenario author imports StrainKit alone: the records' vocabulary (outcomes,
// strategies, profiles, metrics) comes with it.
@_exported import StrainRecords
