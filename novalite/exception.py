"""Every novalite exception, each with a message format and the HTTP code it maps to.

The API turns any ``NovaliteException`` that escapes a controller into Nova's fault
body using ``code`` (see ``api/openstack/wsgi.py``), so a controller only needs to
catch an exception when the code or the message must differ.
"""
from __future__ import annotations


class NovaliteException(Exception):
    """Base class: subclasses set ``msg_fmt`` and may set ``code``."""

    msg_fmt = 'An unknown exception occurred.'
    code = 500
    safe = False

    def __init__(self, message: str | None = None, **kwargs: object) -> None:
        self.kwargs = kwargs
        self.kwargs.setdefault('code', self.code)
        if not message:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                message = self.msg_fmt
        self.message = message
        super().__init__(message)

    def format_message(self) -> str:
        return self.message


class Invalid(NovaliteException):
    msg_fmt = 'Bad request: %(reason)s'
    code = 400


class ValidationError(Invalid):
    msg_fmt = '%(detail)s'


class InvalidInput(Invalid):
    msg_fmt = 'Invalid input received: %(reason)s'


class InvalidRequest(Invalid):
    msg_fmt = 'The request is invalid.'


class InvalidSortKey(Invalid):
    msg_fmt = 'Sort key supplied is invalid: %(key)s'


class MarkerNotFound(Invalid):
    msg_fmt = 'Marker %(marker)s could not be found.'


class InvalidGlobalAPIVersion(Invalid):
    msg_fmt = ('Version %(req_ver)s is not supported by the API. Minimum is %(min_ver)s '
               'and maximum is %(max_ver)s.')
    code = 406


class InvalidAPIVersionString(Invalid):
    msg_fmt = 'API Version String %(version)s is of invalid format. Must be of format ' \
              'MajorNum.MinorNum.'


class FlavorNotAvailable(Invalid):
    msg_fmt = 'Flavor %(flavor_id)s is not available for this project.'


class FlavorDiskTooSmall(Invalid):
    msg_fmt = 'Flavor\'s disk is too small for requested image.'


class FlavorMemoryTooSmall(Invalid):
    msg_fmt = 'Flavor\'s memory is too small for requested image.'


class ImageNotActive(Invalid):
    msg_fmt = 'Image %(image_id)s is not active.'


class AutoDiskConfigDisabledByImage(Invalid):
    msg_fmt = 'Requested image %(image)s has automatic disk resize disabled.'


class InvalidBDM(Invalid):
    msg_fmt = 'Block Device Mapping is Invalid.'


class InvalidBDMFormat(InvalidBDM):
    msg_fmt = 'Block Device Mapping is Invalid: %(details)s'


class InvalidBDMBootSequence(InvalidBDM):
    msg_fmt = 'Block Device Mapping is Invalid: Boot sequence for the instance and ' \
              'image/block device mapping combination is not valid.'


class InvalidBDMVolume(InvalidBDM):
    msg_fmt = 'Block Device Mapping is Invalid: failed to get volume %(id)s.'


class InvalidBDMSnapshot(InvalidBDM):
    msg_fmt = 'Block Device Mapping is Invalid: failed to get snapshot %(id)s.'


class InvalidBDMImage(InvalidBDM):
    msg_fmt = 'Block Device Mapping is Invalid: failed to get image %(id)s.'


class InvalidBDMVolumeNotBootable(InvalidBDM):
    msg_fmt = 'Block Device %(id)s is not bootable.'


class VolumeSmallerThanMinDisk(InvalidBDM):
    msg_fmt = 'Volume is smaller than the minimum size specified in image metadata. ' \
              'Volume size is %(volume_size)i bytes, minimum size is %(image_min_disk)i bytes.'


class InvalidVolume(Invalid):
    msg_fmt = 'Invalid volume: %(reason)s'


class MismatchVolumeAZException(Invalid):
    msg_fmt = 'The availability zone of the volume and of the instance differ: %(reason)s'
    code = 400


class VolumeBDMIsMultiAttach(Invalid):
    msg_fmt = 'Block Device Mapping %(volume_id)s is a multi-attach volume and is not ' \
              'valid for this operation.'


class NotAuthorized(NovaliteException):
    msg_fmt = 'Not authorized.'
    code = 403


class Forbidden(NotAuthorized):
    msg_fmt = 'Forbidden'


class PolicyNotAuthorized(NotAuthorized):
    msg_fmt = 'Policy doesn\'t allow %(action)s to be performed.'


class AdminRequired(NotAuthorized):
    msg_fmt = 'User does not have admin privileges'


class QuotaError(NovaliteException):
    msg_fmt = 'Quota exceeded: code=%(code)s'
    code = 403


class TooManyInstances(QuotaError):
    msg_fmt = ('Quota exceeded for %(overs)s: Requested %(req)s, but already used '
               '%(used)s of %(allowed)s %(overs)s')


class NotFound(NovaliteException):
    msg_fmt = 'Resource could not be found.'
    code = 404


class InstanceNotFound(NotFound):
    msg_fmt = 'Instance %(instance_id)s could not be found.'


class InstanceMappingNotFound(NotFound):
    msg_fmt = 'Instance %(uuid)s has no mapping to a cell.'


class BuildRequestNotFound(NotFound):
    msg_fmt = 'BuildRequest not found for instance %(uuid)s'


class RequestSpecNotFound(NotFound):
    msg_fmt = 'RequestSpec not found for instance %(instance_uuid)s'


class FlavorNotFound(NotFound):
    msg_fmt = 'Flavor %(flavor_id)s could not be found.'


class ImageNotFound(NotFound):
    msg_fmt = 'Image %(image_id)s could not be found.'


class ImageNotAuthorized(ImageNotFound):
    """Glance answered 403 to a write. A kind of ImageNotFound so that callers which
    only care whether they can use the image treat both alike; the image proxy
    answers 403."""

    msg_fmt = 'Not authorized for image %(image_id)s.'
    code = 403


class ImageBadRequest(Invalid):
    msg_fmt = 'Request of image %(image_id)s got BadRequest response: %(response)s'


class ImageDeleteConflict(NovaliteException):
    msg_fmt = 'Conflict deleting image. Reason: %(reason)s.'
    code = 409


class ImageQuotaExceeded(NovaliteException):
    msg_fmt = 'Image quota exceeded'
    code = 413


class KeypairNotFound(NotFound):
    msg_fmt = 'Keypair %(name)s not found for user %(user_id)s'


class CellMappingNotFound(NotFound):
    msg_fmt = 'Cell %(uuid)s has no mapping.'


class HostMappingNotFound(NotFound):
    msg_fmt = 'Host \'%(name)s\' is not mapped to any cell'


class ComputeHostNotFound(NotFound):
    msg_fmt = 'Compute host %(host)s could not be found.'


class ComputeNodeNotFound(NotFound):
    msg_fmt = 'Compute node %(node)s could not be found.'


class ServiceNotFound(NotFound):
    msg_fmt = 'Service %(service_id)s could not be found.'


class InstanceActionNotFound(NotFound):
    msg_fmt = 'Action for request_id %(request_id)s on instance %(instance_uuid)s not found'


class Conflict(NovaliteException):
    msg_fmt = 'Conflict.'
    code = 409


class FlavorExists(Conflict):
    msg_fmt = 'Flavor with name %(name)s already exists.'


class FlavorIdExists(Conflict):
    msg_fmt = 'Flavor with ID %(flavor_id)s already exists.'


class ObjectActionError(NovaliteException):
    msg_fmt = 'Object action %(action)s failed because: %(reason)s'


class InstanceIsLocked(Invalid):
    msg_fmt = 'Instance %(instance_uuid)s is locked'
    code = 409


class InstanceInvalidState(Invalid):
    msg_fmt = ('Instance %(instance_uuid)s in %(attr)s %(state)s. Cannot %(method)s while '
               'the instance is in this state.')
    code = 409


class UnexpectedTaskStateError(InstanceInvalidState):
    msg_fmt = 'Conflict updating instance %(instance_uuid)s. Expected: %(expected)s. ' \
              'Actual: %(actual)s'


class CellMappingExists(Conflict):
    msg_fmt = 'A cell named %(name)s already exists.'


class NoValidHost(NovaliteException):
    msg_fmt = 'No valid host was found. %(reason)s'
    code = 500
    safe = True


class MaxRetriesExceeded(NoValidHost):
    msg_fmt = 'Exceeded maximum number of retries. %(reason)s'


class RescheduledException(NovaliteException):
    msg_fmt = 'Build of instance %(instance_uuid)s was re-scheduled: %(reason)s'


class BuildAbortException(NovaliteException):
    msg_fmt = 'Build of instance %(instance_uuid)s aborted: %(reason)s'


class InstanceFaultRollback(NovaliteException):
    msg_fmt = 'Instance rollback performed due to: %(inner_exception)s'


class ResourceProviderError(NovaliteException):
    msg_fmt = 'Placement call failed: %(reason)s'


class PlacementAPIConnectFailure(ResourceProviderError):
    msg_fmt = 'Unable to communicate with the Placement API: %(reason)s'
    safe = True


class CellUnavailable(NovaliteException):
    """A cell's database did not answer: an outage, not an answer about hosts."""

    msg_fmt = 'The database of cell %(cell_uuid)s did not answer: %(reason)s'
    code = 503


class PlacementAPIServerError(ResourceProviderError):
    """Placement answered 5xx: down behind its proxy, or failing for now."""

    msg_fmt = 'Placement call failed: %(reason)s'


class AllocationUpdateFailed(ResourceProviderError):
    msg_fmt = 'Failed to update allocations for consumer %(consumer_uuid)s. ' \
              'Error: %(error)s'


class AllocationConflict(AllocationUpdateFailed):
    """Placement's generations kept changing under a claim (many claims at once on
    the same providers, as after an outage): worth trying again in a moment."""


class ResourceProviderInventoryUpdateFailed(ResourceProviderError):
    msg_fmt = 'Failed to update inventory of resource provider %(uuid)s: %(error)s'


class ComputeResourcesUnavailable(NovaliteException):
    msg_fmt = 'Insufficient compute resources: %(reason)s.'
    safe = True


class GlanceConnectionFailed(NovaliteException):
    msg_fmt = 'Connection to glance host %(server)s failed: %(reason)s'
    code = 503


class NeutronConnectionFailed(NovaliteException):
    msg_fmt = 'Could not reach the network service (Neutron) at %(server)s: %(reason)s'
    code = 503


class CinderConnectionFailed(NovaliteException):
    msg_fmt = 'Could not reach the volume service (Cinder) at %(server)s: %(reason)s'
    code = 503


class CinderAPIVersionNotAvailable(NovaliteException):
    msg_fmt = 'The volume service (Cinder) does not offer API version %(version)s.'


class VolumeNotFound(NotFound):
    msg_fmt = 'Volume %(volume_id)s could not be found.'


class SnapshotNotFound(NotFound):
    msg_fmt = 'Snapshot %(snapshot_id)s could not be found.'


class VolumeAttachmentNotFound(NotFound):
    msg_fmt = 'Volume attachment %(attachment_id)s could not be found.'


class VolumeBDMNotFound(NotFound):
    msg_fmt = 'No volume Block Device Mapping with id %(volume_id)s.'


class VolumeBDMPathNotFound(VolumeBDMNotFound):
    msg_fmt = 'No volume Block Device Mapping at path: %(path)s'


class VolumeNotCreated(NovaliteException):
    msg_fmt = 'Volume %(volume_id)s did not finish being created even after we waited ' \
              '%(seconds)s seconds or %(attempts)s attempts. And its status is ' \
              '%(volume_status)s.'


class VolumeAttachFailed(NovaliteException):
    msg_fmt = 'Volume %(volume_id)s could not be attached. Reason: %(reason)s'


class VolumeDetachFailed(NovaliteException):
    msg_fmt = 'Volume %(volume_id)s could not be detached. Reason: %(reason)s'


class DeviceDetachFailed(NovaliteException):
    msg_fmt = 'Device detach failed for %(device)s: %(reason)s'


class VolumeOverQuota(NovaliteException):
    msg_fmt = 'The volume service (Cinder) refused: quota exceeded: %(reason)s'
    code = 403


class VolumeError(NovaliteException):
    """Cinder answered with an error the caller did not expect."""

    msg_fmt = 'The volume service (Cinder) answered %(status)s to %(method)s %(path)s: ' \
              '%(detail)s'


class NetworkNotFound(NotFound):
    msg_fmt = 'Network %(network_id)s could not be found.'


class PortNotFound(NotFound):
    msg_fmt = 'Port id %(port_id)s could not be found.'


class SecurityGroupNotFound(NotFound):
    msg_fmt = 'Security group %(security_group_id)s not found.'


class SecurityGroupNotFoundForRule(SecurityGroupNotFound):
    msg_fmt = 'Security group with rule %(rule_id)s not found.'


class SecurityGroupCannotBeApplied(Invalid):
    msg_fmt = ('Network requires port_security_enabled and subnet associated in order to '
               'apply security groups.')


class SecurityGroupLimitExceeded(QuotaError):
    msg_fmt = 'Maximum number of security groups or rules exceeded'


class NoUniqueMatch(Conflict):
    msg_fmt = 'No Unique Match Found.'


class InvalidCidr(Invalid):
    msg_fmt = '%(cidr)s is not a valid IP network.'


class InvalidIpProtocol(Invalid):
    msg_fmt = 'Invalid IP protocol %(protocol)s.'


class InvalidPortRange(Invalid):
    msg_fmt = 'Invalid port range %(from_port)s:%(to_port)s. %(msg)s'


class FloatingIpNotFound(NotFound):
    msg_fmt = 'Floating IP not found for ID %(id)s.'


class FloatingIpNotFoundForAddress(FloatingIpNotFound):
    msg_fmt = 'Floating IP not found for address %(address)s.'


class FloatingIpMultipleFoundForAddress(Conflict):
    msg_fmt = 'Multiple floating IPs are found for address %(address)s.'


class FloatingIpPoolNotFound(NotFound):
    msg_fmt = 'Floating IP pool not found.'


class NoMoreFloatingIps(FloatingIpNotFound):
    msg_fmt = 'Zero floating IPs available.'


class FloatingIpLimitExceeded(QuotaError):
    msg_fmt = 'Maximum number of floating IPs exceeded'


class FloatingIpBadRequest(Invalid):
    msg_fmt = 'Bad floating IP request: %(reason)s'


class FloatingIpAssociateFailed(Invalid):
    msg_fmt = 'Floating IP %(address)s association has failed.'


class FixedIpNotFoundForAddress(NotFound):
    msg_fmt = 'Fixed IP not found for address %(address)s.'


class PortInUse(Conflict):
    msg_fmt = 'Port %(port_id)s is still in use.'


class PortNotUsable(Conflict):
    msg_fmt = 'Port %(port_id)s not usable for instance %(instance)s.'


class NetworkAmbiguous(Conflict):
    msg_fmt = ('Multiple possible networks found, use a Network ID to be more '
               'specific.')


class FixedIpAlreadyInUse(Conflict):
    msg_fmt = 'Fixed IP address %(address)s is already in use on instance %(instance_uuid)s.'


class InvalidFixedIpAndMaxCountRequest(Invalid):
    msg_fmt = 'Failed to launch instances: %(reason)s'


class NetworkRequiresSubnet(Invalid):
    msg_fmt = 'Network %(network_uuid)s requires a subnet in order to boot instances on.'


class UnableToAutoAllocateNetwork(Invalid):
    msg_fmt = 'Unable to automatically allocate a network for project %(project_id)s'


class PortLimitExceeded(QuotaError):
    msg_fmt = 'Maximum number of ports exceeded'


class ExternalNetworkAttachForbidden(Forbidden):
    msg_fmt = 'It is not allowed to create an interface on external network %(network_uuid)s'


class PortBindingFailed(NovaliteException):
    msg_fmt = ('Binding failed for port %(port_id)s on host %(host)s, please check '
               'neutron logs for more information.')


class VirtualInterfaceCreateException(NovaliteException):
    msg_fmt = 'Virtual Interface creation failed: %(reason)s'


class NetworkAllocationFailed(NovaliteException):
    msg_fmt = 'Failed to allocate the network(s): %(reason)s'


class InterfaceAttachFailed(NovaliteException):
    msg_fmt = 'Failed to attach network adapter device to %(instance_uuid)s'
    safe = True


class InterfaceAttachFailedNoNetwork(Invalid):
    msg_fmt = ("No specific network was requested and none are available for project "
               "'%(project_id)s'.")


class InterfaceDetachFailed(Invalid):
    msg_fmt = 'Failed to detach network adapter device from %(instance_uuid)s'


class AttachInterfaceNotSupported(Invalid):
    msg_fmt = 'Attaching interfaces is not supported for instance %(instance_uuid)s.'


class NetworkInterfaceTaggedAttachNotSupported(Invalid):
    msg_fmt = 'Tagged network interface attach is not supported by this compute service.'


class NetworkNotFoundForInstance(NetworkNotFound):
    msg_fmt = 'Network could not be found for instance %(instance_id)s.'


class FixedIpNotFoundForInstance(Invalid):
    msg_fmt = "Instance %(instance_uuid)s does not have fixed IP '%(ip)s'."


class ImageServiceError(NovaliteException):
    msg_fmt = 'The image service failed: %(reason)s'
    code = 503


class ServiceUnavailable(NovaliteException):
    msg_fmt = 'Service is unavailable at this time.'
    code = 503


class ComputeServiceUnavailable(ServiceUnavailable):
    msg_fmt = 'Compute service of %(host)s is unavailable at this time.'


class DBNotAllowed(NovaliteException):
    msg_fmt = '%(binary)s attempted direct database access which is not allowed by policy'


class VirtDriverNotFound(NovaliteException):
    msg_fmt = 'Could not load virt driver %(name)s'


class InstanceExists(Conflict):
    msg_fmt = 'Instance %(name)s already exists.'


class CellTimeout(NovaliteException):
    msg_fmt = 'Timeout waiting for response from cell'


class HypervisorUnavailable(NovaliteException):
    msg_fmt = 'Connection to the hypervisor is broken on host %(host)s: %(reason)s'


class DiskCreationFailed(NovaliteException):
    msg_fmt = 'Could not create disk %(path)s: %(reason)s'


class GuestGone(NovaliteException):
    msg_fmt = 'The guest of instance %(uuid)s is gone from host %(host)s'


class KeyPairExists(Conflict):
    msg_fmt = 'Key pair \'%(key_name)s\' already exists.'


class InvalidKeypair(Invalid):
    msg_fmt = 'Keypair data is invalid: %(reason)s'


class KeypairLimitExceeded(QuotaError):
    msg_fmt = 'Quota exceeded, too many key pairs.'


class MetadataLimitExceeded(QuotaError):
    msg_fmt = 'Maximum number of metadata items exceeds %(allowed)d'


class InstanceTagNotFound(NotFound):
    msg_fmt = 'Instance %(instance_id)s has no tag \'%(tag)s\''


class FlavorAccessExists(Conflict):
    msg_fmt = ('Flavor access already exists for flavor %(flavor_id)s and project '
               '%(project_id)s combination.')


class FlavorAccessNotFound(NotFound):
    msg_fmt = 'Flavor access not found for %(flavor_id)s / %(project_id)s combination.'


class FlavorExtraSpecsNotFound(NotFound):
    msg_fmt = 'Flavor %(flavor_id)s has no extra specs with key %(extra_specs_key)s.'


class InstanceGroupNotFound(NotFound):
    msg_fmt = 'Instance group %(group_uuid)s could not be found.'


class AggregateNotFound(NotFound):
    msg_fmt = 'Aggregate %(aggregate_id)s could not be found.'


class AggregateHostExists(Conflict):
    msg_fmt = 'Aggregate %(aggregate_id)s already has host %(host)s.'


class OverQuota(QuotaError):
    msg_fmt = 'Quota exceeded for resources: %(overs)s'


class InstanceGroupIdExists(Conflict):
    msg_fmt = 'Instance group %(group_uuid)s already exists.'


class AggregateNameExists(Conflict):
    msg_fmt = 'Aggregate %(aggregate_name)s already exists.'


class AggregateHostNotFound(NotFound):
    msg_fmt = 'Aggregate %(aggregate_id)s has no host %(host)s.'


class MigrationNotFound(NotFound):
    msg_fmt = 'Migration %(migration_id)s could not be found.'


class MigrationNotFoundForInstance(MigrationNotFound):
    msg_fmt = 'Migration %(migration_id)s not found for instance %(instance_id)s'


class InvalidMigrationState(Invalid):
    msg_fmt = ('Migration %(migration_id)s state of instance %(instance_uuid)s is %(state)s. '
               'Cannot %(method)s while the migration is in this state.')


class ResourceProviderInUse(Conflict):
    msg_fmt = 'Resource provider %(uuid)s still has allocations: %(reason)s'


# -- resize and migrations ------------------------------------------------------------

class MigrationNotFoundByStatus(MigrationNotFound):
    msg_fmt = 'Migration not found for instance %(instance_id)s with status %(status)s.'


class CannotResizeToSameFlavor(Invalid):
    msg_fmt = 'When resizing, instances must change flavor!'


class CannotResizeDisk(Invalid):
    msg_fmt = 'Server disk was unable to be resized because: %(reason)s'


class ResizeError(NovaliteException):
    msg_fmt = 'Resize error: %(reason)s'


class MigrationError(NovaliteException):
    msg_fmt = 'Migration error: %(reason)s'


class MigrationPreCheckError(MigrationError):
    msg_fmt = 'Migration pre-check error: %(reason)s'
    code = 400


class ComputeServiceInUse(NovaliteException):
    msg_fmt = 'Compute service of %(host)s is still in use.'
    code = 400


class AllocationMoveFailed(ResourceProviderError):
    msg_fmt = ('Failed to move allocations from consumer %(source_consumer)s to '
               'consumer %(target_consumer)s. Error: %(error)s')


# -- in-place actions (pause, rescue, password, crash dump) ---------------------------

class InstanceNotRescuable(Invalid):
    msg_fmt = 'Instance %(instance_id)s cannot be rescued: %(reason)s'


class UnsupportedRescueImage(Invalid):
    msg_fmt = "Requested rescue image '%(image)s' is not supported"


class InstancePasswordSetFailed(NovaliteException):
    msg_fmt = 'Failed to set admin password on %(instance)s because %(reason)s'
    code = 409


class SetAdminPasswdNotSupported(Invalid):
    msg_fmt = 'Set admin password is not supported'
    code = 409


class InstanceAgentNotEnabled(Invalid):
    msg_fmt = 'Guest agent is not enabled for the instance'
    code = 409


class QemuGuestAgentNotEnabled(InstanceAgentNotEnabled):
    msg_fmt = 'QEMU guest agent is not enabled'


class TriggerCrashDumpNotSupported(Invalid):
    msg_fmt = 'Triggering crash dump is not supported'


class InstanceNotRunning(Invalid):
    msg_fmt = 'Instance %(instance_id)s is not running.'
    code = 409


class TaskAlreadyRunning(NovaliteException):
    msg_fmt = 'Task %(task_name)s is already running on host %(host)s'


class TaskNotRunning(NovaliteException):
    msg_fmt = 'Task %(task_name)s is not running on host %(host)s'


# -- consoles (issue 23) -----------------------------------------------------------------

class ConsoleTypeInvalid(Invalid):
    msg_fmt = 'Invalid console type %(console_type)s'


class ConsoleTypeUnavailable(Invalid):
    msg_fmt = 'Unavailable console type %(console_type)s.'


class ConsoleNotAvailable(Conflict):
    msg_fmt = 'Guest does not have a console available.'


class InstanceNotReady(Conflict):
    msg_fmt = 'Instance %(instance_id)s is not ready'


class ConsolePortRangeExhausted(NovaliteException):
    msg_fmt = 'The console port range %(min_port)d-%(max_port)d is exhausted.'


class InvalidToken(Invalid):
    msg_fmt = 'The token \'%(token)s\' is invalid or has expired'
